// The package hands an object to the engine as JSON.stringify's text when that text is what
// the addon's own conversion would build (index.js, `given`), and to the addon otherwise.
// Differentially: on many generated values and the edge cases, both ways give the same
// bytes, and what one refuses the other refuses with the addon's words.
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { Policy, encode } from "../index.mjs";
import { compact } from "./support.mjs";

const PKG = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const native = createRequire(import.meta.url)(process.env.PARE_NODE_ADDON || path.join(PKG, "pare.node"));

/** The addon's own conversion, with no text in between. */
const direct = (v, format = "json") => native.encode(v, format, undefined).text;

function generated(seed) {
  let s = seed;
  const rnd = () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const pick = (xs) => xs[Math.floor(rnd() * xs.length)];
  const leaf = () =>
    pick([
      () => rnd() * 10 ** Math.floor(rnd() * 40 - 20),
      () => -Math.floor(rnd() * 2 ** 60),
      () => pick([0, -0, 1e21, 1e-7, 5e-324, Number.MAX_VALUE, 2 ** 53 + 2, 0.1 + 0.2]),
      () => pick(["", "é", "\u2028", '"\\', "\ud83d\ude00", "\u0000\u001f", "x".repeat(Math.floor(rnd() * 50))]),
      () => pick([true, false, null, undefined]),
      () => new Date(Math.floor(rnd() * 2e12)),
      () => pick([() => 1, Symbol("s")]),
    ])();
  const value = (depth) => {
    if (depth > 4 || rnd() < 0.3) return leaf();
    if (rnd() < 0.5) return Array.from({ length: Math.floor(rnd() * 5) }, () => value(depth + 1));
    const o = {};
    for (let i = 0; i < Math.floor(rnd() * 6); i++) o[pick(["a", "b", "1", "0", "é", "", "__proto__x", `k${i}`])] = value(depth + 1);
    return o;
  };
  return value(0);
}

test("objects given as JSON.stringify's text give the addon's own bytes", () => {
  let n = 0;
  for (let seed = 1; seed <= 400; seed++) {
    const v = generated(seed);
    // A string is JSON text to every function, not a value: only containers and other leaves here.
    if (v === undefined || typeof v === "function" || typeof v === "symbol" || typeof v === "string") continue;
    for (const format of ["json", "toon", "pretty"]) {
      assert.equal(encode(v, { format, onWarning() {} }), direct(v, format), `seed ${seed} ${format}`);
    }
    n++;
  }
  assert.ok(n > 300);
});

test("what the text would get wrong goes to the addon, which says what and where", () => {
  const nan = { a: [1, { b: NaN }] };
  assert.throws(() => encode(nan), { name: "TypeError", message: /NaN at \$\.a\[1\]\.b/ });
  assert.throws(() => Policy.builtin().shape({ x: -Infinity }), { message: /-Infinity at \$\.x/ });
  assert.throws(() => encode({ s: "a\udc00" }), { name: "TypeError", message: /lone surrogate \\udc00 in a string at \$\.s/ });
  assert.throws(() => encode({ n: 1n }), { message: /BigInt at \$\.n/ });
  const cycle = {};
  cycle.self = [cycle];
  assert.throws(() => encode(cycle), { message: /nests deeper than 256 levels/ });
  // regression: the doors wrote a place each their own way; the engine's form, everywhere.
  assert.throws(() => encode({ "x y": { b: { "a\nb": [NaN] } } }), { message: /NaN at \$\['x y'\]\.b\['a\\nb'\]\[0\]/ });
  // A toJSON other than Date's is called once, by the addon, and its result checked.
  let calls = 0;
  assert.throws(
    () =>
      encode({
        t: {
          toJSON() {
            calls++;
            return { v: NaN };
          },
        },
      }),
    { message: /NaN at \$\.t\.v/ },
  );
  assert.equal(calls, 1);
  // Deep but legal: past the quick walk's depth, the addon converts it; one level more is
  // refused, as pare compact refuses the text of it.
  let deep = 1;
  for (let i = 0; i < 256; i++) deep = [deep];
  assert.equal(encode(deep, { format: "json" }), direct(deep));
  assert.equal(encode(deep, { format: "json" }), JSON.stringify(deep));
  assert.equal(compact(JSON.stringify(deep), []), JSON.stringify(deep));
  assert.throws(() => encode([deep]), { message: /nests deeper than 256 levels/ });
  assert.throws(() => compact(JSON.stringify([deep]), []), /nesting deeper than 256 levels/);
});

test("a shaped object's tokensBefore counts JSON.stringify's text", () => {
  const v = { a: [1, 2.5, "x"], when: new Date(0) };
  const out = Policy.builtin().shape(v);
  assert.equal(out.text, JSON.stringify(v));
  assert.equal(out.tokensBefore, native.countTokens(JSON.stringify(v)));
});
