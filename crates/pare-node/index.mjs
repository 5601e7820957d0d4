// The ES module face of pare-llm: the same objects as `require("pare-llm")` (index.js).
import { createRequire } from "node:module";

const pare = createRequire(import.meta.url)("./index.js");

export const {
  Policy,
  Shaped,
  PareError,
  PolicyError,
  JsonError,
  CursorError,
  BudgetError,
  countTokens,
  countTokensAsync,
  encode,
  expand,
  pack,
  stats,
  mcp,
  express,
  fastify,
  version,
  build,
} = pare;
export default pare;
