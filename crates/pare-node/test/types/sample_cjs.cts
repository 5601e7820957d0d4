// The CommonJS face, typed the same.
import pare = require("pare-llm");

const p: pare.Policy = pare.Policy.builtin();
export const n: number = pare.countTokens(p.shape("[1]").text);
