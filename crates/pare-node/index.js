// pare for Node and TypeScript: the pare engine in-process (Node-API addon `pare.node`,
// built from crates/pare-node by scripts/build.js). The same engine, policy files and
// bytes as the `pare` command, `pare mcp`, `pare http` and the Python package.
//
//   const { Policy, countTokens, encode } = require("pare-llm");
//   const policy = Policy.fromFile("entities.toml");
//   const out = policy.shape(payload, { budget: 2000 });
//   out.text, out.tokensBefore, out.tokensAfter, out.page, out.pages, out.nextCursor
//
// This file maps JavaScript's conventions onto the addon: options objects checked with
// errors that name the option, typed errors, lazily counted tokens, values parsed from the
// addon's JSON.
"use strict";

const path = require("node:path");

function loadAddon() {
  const file = process.env.PARE_NODE_ADDON || path.join(__dirname, "pare.node");
  try {
    return require(file);
  } catch (e) {
    const err = new Error(
      `pare-llm: cannot load the native addon ${file} (${e.message}). ` +
        "It is built from the clone with the Rust toolchain: `npm run build` in crates/pare-node " +
        "(or `npm install ./crates/pare-node`, which runs it).",
    );
    err.cause = e;
    throw err;
  }
}
const native = loadAddon();

// ---- errors -------------------------------------------------------------------------

/** Any error pare raises about its input, policy or options. */
class PareError extends Error {
  constructor(message, fields) {
    super(message);
    this.name = new.target.name;
    if (fields) Object.assign(this, fields);
  }
}
/** A policy (or a level, format, tokenizer named in a call) that is not valid: `key`, `value`, `allowed`, `kind`, `line`, `column`. */
class PolicyError extends PareError {}
/** Input that is not JSON: `line`, `column` (1-based), `offset` (bytes). */
class JsonError extends PareError {}
/** A cursor that is not pare's, or from another input or other options. */
class CursorError extends PareError {}
/** A budget too small for any page. */
class BudgetError extends PareError {}

const TAG = "\u0001pare:";
const CLASSES = { PolicyError, JsonError, CursorError, BudgetError, PareError };

/** The addon's tagged error as the typed error it names (see crates/pare-node/src/errors.rs). */
function typed(e) {
  if (!(e instanceof Error) || typeof e.message !== "string" || !e.message.startsWith(TAG)) return e;
  const { type, message, ...fields } = JSON.parse(e.message.slice(TAG.length));
  if (type === "TypeError") return new TypeError(message);
  const Class = CLASSES[type] || PareError;
  return new Class(message, fields);
}

function call(f) {
  try {
    return f();
  } catch (e) {
    throw typed(e);
  }
}

async function later(f) {
  let p;
  try {
    p = f();
  } catch (e) {
    throw typed(e);
  }
  try {
    return await p;
  } catch (e) {
    throw typed(e);
  }
}

// ---- values -------------------------------------------------------------------------

// An object is given to the engine as `JSON.stringify`'s text when that text is exactly what
// the addon's own conversion (crates/pare-node/src/convert.rs) would build: V8 writes JSON
// several times faster than Node-API can walk an object (1 MB: 1.9 ms against 14 ms). A
// quick walk first looks for what `JSON.stringify` would write differently or not at all:
// a non-finite number (it writes `null`), a `toJSON` other than `Date`'s (its result is not
// walked), a boxed primitive, nesting near the engine's limit. Any of those, and anything
// `JSON.stringify` throws on or the engine refuses in its text, goes to the addon's
// conversion, which says exactly what and where.
const DATE_TO_JSON = Date.prototype.toJSON;
const hasOwn = Object.prototype.hasOwnProperty;
const FAST_DEPTH = 200; // the addon (and pare's JSON parser) refuse past 256

function plain(v, depth) {
  if (typeof v === "number") return Number.isFinite(v);
  if (typeof v !== "object" || v === null) return typeof v !== "bigint";
  if (depth > FAST_DEPTH) return false;
  const toJSON = v.toJSON;
  if (toJSON !== undefined) return toJSON === DATE_TO_JSON;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (!plain(v[i], depth + 1)) return false;
    return true;
  }
  if (v instanceof Number || v instanceof String || v instanceof Boolean) return false;
  for (const k in v) {
    if (hasOwn.call(v, k) && !plain(v[k], depth + 1)) return false;
  }
  return true;
}

/** What to hand the addon for `input`: JSON text as it is, else an object's JSON text when that is exact, else the object. */
function given(input) {
  if (typeof input === "string" || input instanceof Uint8Array || input === null || typeof input !== "object") return input;
  if (!plain(input, 0)) return input;
  try {
    const text = JSON.stringify(input);
    return text === undefined ? input : text;
  } catch {
    return input; // the addon's conversion says why, with the path
  }
}

/**
 * `f(given(input))`, and when the engine refuses the text made from an object, `f(input)`
 * for the addon's own words. Returns `[result, source]`: what the input's tokens are counted
 * from (the text, when there is one).
 */
function withInput(input, f) {
  const g = given(input);
  if (g === input) return [call(() => f(input)), input];
  try {
    return [f(g), g];
  } catch (e) {
    const err = typed(e);
    if (err instanceof JsonError) return [call(() => f(input)), input]; // a lone surrogate, say
    throw err;
  }
}

async function withInputLater(input, f) {
  const g = given(input);
  if (g === input) return [await later(() => f(input)), input];
  try {
    return [await f(g), g];
  } catch (e) {
    const err = typed(e);
    if (err instanceof JsonError) return [await later(() => f(input)), input];
    throw err;
  }
}

// ---- options ------------------------------------------------------------------------

const SHAPE_OPTIONS = ["level", "params", "format", "tokenizer", "budget", "cursor", "omitted", "query", "fields"];

function checkKeys(options, allowed, what) {
  if (options === undefined || options === null) return {};
  if (typeof options !== "object" || Array.isArray(options)) {
    throw new TypeError(`${what}: options must be an object, not ${describe(options)}`);
  }
  for (const k of Object.keys(options)) {
    if (!allowed.includes(k)) {
      throw new TypeError(`${what}: unknown option ${JSON.stringify(k)}; allowed: ${allowed.join(", ")}`);
    }
  }
  return options;
}

function describe(v) {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  return typeof v === "object" ? "an object" : `${typeof v} ${String(v)}`;
}

function optString(v, name) {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") throw new TypeError(`${name} must be a string, not ${describe(v)}`);
  return v;
}

function optBudget(v, name = "budget") {
  if (v === undefined || v === null) return undefined;
  if (!Number.isSafeInteger(v) || v < 1 || v > 0xffffffff) {
    throw new TypeError(`${name} must be a whole number of tokens >= 1, not ${describe(v)}`);
  }
  return v;
}

/** `fields`: a string of comma-separated fields, or an array of them, as the engine takes it. */
function optFields(v) {
  if (v === undefined || v === null) return undefined;
  if (typeof v === "string") return [v];
  if (Array.isArray(v) && v.every((f) => typeof f === "string")) return v;
  throw new TypeError(`fields must be a string or an array of strings, not ${describe(v)}`);
}

function optBool(v, name) {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "boolean") throw new TypeError(`${name} must be a boolean, not ${describe(v)}`);
  return v;
}

/** `{maxGapMinutes: 5}` → `[["maxGapMinutes", "5"]]`, as the engine takes them. */
function paramPairs(params) {
  if (params === undefined || params === null) return undefined;
  if (typeof params !== "object" || Array.isArray(params)) {
    throw new TypeError(`params must be an object of name: value, not ${describe(params)}`);
  }
  return Object.entries(params).map(([k, v]) => {
    if (typeof v === "string") return [k, v];
    if (typeof v === "boolean") return [k, String(v)];
    if (typeof v === "number" && Number.isFinite(v)) return [k, String(v)];
    throw new TypeError(`params[${JSON.stringify(k)}] must be a string, finite number or boolean, not ${describe(v)}`);
  });
}

function callOptions(options, what, allowed = SHAPE_OPTIONS) {
  const o = checkKeys(options, allowed, what);
  return {
    level: optString(o.level, "level"),
    params: paramPairs(o.params),
    format: optString(o.format, "format"),
    tokenizer: optString(o.tokenizer, "tokenizer"),
    budget: optBudget(o.budget),
    cursor: optString(o.cursor, "cursor"),
    omitted: optBool(o.omitted, "omitted"),
    query: optString(o.query, "query"),
    fields: optFields(o.fields),
  };
}

// ---- results ------------------------------------------------------------------------

/** One page of a shaped response: the text a model reads and the record of what happened. */
class Shaped {
  #page;
  #input;
  #record;
  constructor(page, input) {
    this.#page = page;
    this.#input = input;
    /** The page's text: what `pare compact` prints with the same options (without the final newline). */
    this.text = page.text;
    /** A line for the reader after the text (page position, how to go on, why the level was lowered, what a policy removed); the budget covers text and note together. */
    this.note = page.note ?? null;
    this.tokenizer = page.tokenizer;
    /** `json`, `pretty`, `toon` (what `auto` chose), or `text`. */
    this.format = page.format;
    /** The level shown. */
    this.level = page.level;
    /** The level asked for, when it was lowered to fit the budget. */
    this.loweredFrom = page.loweredFrom ?? null;
    /** 1-based page number, and the number of pages. */
    this.page = page.page;
    this.pages = page.pages;
    /** Pass as `cursor` (with the same input and options) for the next page. */
    this.nextCursor = page.nextCursor ?? null;
    this.warnings = page.warnings;
  }

  /** Tokens of the input as given (its text, or a value as minified JSON); counted when first read. */
  get tokensBefore() {
    const p = this.#page;
    if (p.tokensBefore == null) {
      const input = this.#input;
      p.tokensBefore = call(() =>
        typeof input === "string" ? native.countTokens(input, p.tokenizer) : native.countValueTokens(input, p.tokenizer),
      );
    }
    return p.tokensBefore;
  }

  /** Tokens of `text` (the note not included); counted when first read. */
  get tokensAfter() {
    const p = this.#page;
    if (p.tokensAfter == null) p.tokensAfter = call(() => native.countTokens(p.text, p.tokenizer));
    return p.tokensAfter;
  }

  /** Tokens of `note`; 0 without one. */
  get noteTokens() {
    const p = this.#page;
    if (p.noteTokens == null) p.noteTokens = p.note == null ? 0 : call(() => native.countTokens(p.note, p.tokenizer));
    return p.noteTokens;
  }

  /** `input` (the input text itself), `value`, `text` or `packed`. */
  get kind() {
    return this.#parsed().kind ?? "value";
  }

  /** What the policy removed, by kind: counts, never values. */
  get omitted() {
    return { ...(this.#parsed().omitted ?? {}) };
  }

  #parsed() {
    if (!this.#record) this.#record = JSON.parse(this.#page.record);
    return this.#record;
  }

  /** The whole record (the keys `pare compact --report-json` uses for a page), counts included. */
  record() {
    return {
      ...this.#parsed(),
      tokens_before: this.tokensBefore,
      tokens_after: this.tokensAfter,
      note_tokens: this.noteTokens,
    };
  }

  toString() {
    return this.text;
  }
}

// ---- policy -------------------------------------------------------------------------

/** A compiled pare policy (TOML or JSON): which ops shape a payload, at which levels. */
class Policy {
  #native;
  constructor(handle) {
    if (!(handle instanceof native.NativePolicy)) {
      throw new TypeError("use Policy.fromFile, Policy.fromString, Policy.fromObject or Policy.builtin()");
    }
    this.#native = handle;
  }

  /** Read and compile a policy file (TOML, or JSON when it starts with `{`). */
  static fromFile(file) {
    if (typeof file !== "string" && !(file instanceof URL)) {
      throw new TypeError(`Policy.fromFile: the path must be a string or file URL, not ${describe(file)}`);
    }
    const p = file instanceof URL ? require("node:url").fileURLToPath(file) : file;
    return new Policy(call(() => native.NativePolicy.fromFile(p)));
  }

  /** Compile a policy from its text (TOML, or JSON when it starts with `{`). */
  static fromString(text) {
    if (typeof text !== "string") throw new TypeError(`Policy.fromString: the text must be a string, not ${describe(text)}`);
    return new Policy(call(() => native.NativePolicy.fromString(text)));
  }

  /** Compile a policy from an object (the JSON form of the file). */
  static fromObject(obj) {
    if (obj === null || typeof obj !== "object" || Array.isArray(obj)) {
      throw new TypeError(`Policy.fromObject: the policy must be an object, not ${describe(obj)}`);
    }
    return new Policy(withInput(obj, (v) => (typeof v === "string" ? native.NativePolicy.fromString(v) : native.NativePolicy.fromObject(v)))[0]);
  }

  /** The built-in policy: no ops, every level lossless. */
  static builtin() {
    return new Policy(native.NativePolicy.builtin());
  }

  /** Detail levels, least detail first; the last is `full` (the input unchanged). */
  get levels() {
    return this.#native.levels;
  }
  /** The level used when a call names none. */
  get defaultLevel() {
    return this.#native.defaultLevel;
  }
  get description() {
    return this.#native.description ?? null;
  }
  /** The parameters a caller may set, with their defaults. */
  get params() {
    return JSON.parse(this.#native.paramsJson);
  }
  /** The text it was compiled from (`null` for the built-in one). */
  get source() {
    return this.#native.source ?? null;
  }
  /** The file it was read from, if any. */
  get path() {
    return this.#native.path ?? null;
  }

  /** @internal the addon's handle, for the integrations. */
  get _native() {
    return this.#native;
  }

  /**
   * Shape `input` — a value, or JSON text as a string, Buffer or Uint8Array — and return the
   * first page (the whole response without a budget).
   */
  shape(input, options) {
    const o = callOptions(options, "shape");
    const [page, source] = withInput(input, (i) => this.#native.shape(i, o));
    return new Shaped(page, source);
  }

  /** Every page under `options.budget` (required). */
  pages(input, options) {
    const o = callOptions(options, "pages");
    if (o.budget === undefined) throw new TypeError("pages: options.budget is required (pages exist only under a budget)");
    const [pages, source] = withInput(input, (i) => this.#native.pages(i, o));
    return pages.map((p) => new Shaped(p, source));
  }

  /** The shaped value itself, for callers that serialise it themselves (no format, no budget: those are about text). */
  shapeValue(input, options) {
    const o = callOptions(options, "shapeValue", ["level", "params"]);
    return JSON.parse(withInput(input, (i) => this.#native.shapeValue(i, o))[0]);
  }

  /** `shape` on the libuv thread pool: the input is read on this thread, the engine runs off it. */
  async shapeAsync(input, options) {
    const o = callOptions(options, "shapeAsync");
    const [[page], source] = await withInputLater(input, (i) => this.#native.shapeAsync(i, o));
    return new Shaped(page, source);
  }

  /** `pages` on the libuv thread pool. */
  async pagesAsync(input, options) {
    const o = callOptions(options, "pagesAsync");
    if (o.budget === undefined) throw new TypeError("pagesAsync: options.budget is required (pages exist only under a budget)");
    const [pages, source] = await withInputLater(input, (i) => this.#native.pagesAsync(i, o));
    return pages.map((p) => new Shaped(p, source));
  }

  /** `shapeValue` on the libuv thread pool. */
  async shapeValueAsync(input, options) {
    const o = callOptions(options, "shapeValueAsync", ["level", "params"]);
    return JSON.parse((await withInputLater(input, (i) => this.#native.shapeValueAsync(i, o)))[0]);
  }

  toString() {
    const where = this.path ? `, path=${JSON.stringify(this.path)}` : this.source === null ? ", builtin" : "";
    return `Policy(levels=${JSON.stringify(this.levels)}, defaultLevel=${JSON.stringify(this.defaultLevel)}${where})`;
  }
}

// ---- functions ----------------------------------------------------------------------

function textArg(text, what) {
  if (typeof text !== "string") throw new TypeError(`${what}: the text must be a string, not ${describe(text)}`);
  return text;
}

/** Exact tokens of `text` by a real tokenizer (`o200k_base`, `cl100k_base`, or `chars4`). */
function countTokens(text, options) {
  const o = checkKeys(options, ["tokenizer"], "countTokens");
  const tok = optString(o.tokenizer, "tokenizer");
  textArg(text, "countTokens");
  return call(() => native.countTokens(text, tok));
}

/** `countTokens` on the libuv thread pool. */
function countTokensAsync(text, options) {
  const o = checkKeys(options, ["tokenizer"], "countTokensAsync");
  const tok = optString(o.tokenizer, "tokenizer");
  textArg(text, "countTokensAsync");
  return later(() => native.countTokensAsync(text, tok));
}

/**
 * A value (or JSON text) as `json`, `pretty`, `toon` or `auto` (default: the cheapest
 * lossless text by the tokenizer's count), as `pare encode` writes it. Numbers TOON cannot
 * carry exactly are reported through `options.onWarning` (default: `process.emitWarning`).
 */
function encode(value, options) {
  const o = checkKeys(options, ["format", "tokenizer", "onWarning"], "encode");
  const format = optString(o.format, "format");
  const tokenizer = optString(o.tokenizer, "tokenizer");
  const [out] = withInput(value, (v) => native.encode(v, format, tokenizer));
  const warn = o.onWarning ?? ((w) => process.emitWarning(w, "PareWarning"));
  for (const w of out.warnings) warn(w);
  return out.text;
}

/** Any of pare's encodings (JSON, TOON, `auto` text) back to the value. `reader`: `detect` (default), `json`, `toon`. */
function expand(text, options) {
  const o = checkKeys(options, ["reader"], "expand");
  textArg(text, "expand");
  return JSON.parse(call(() => native.expand(text, optString(o.reader, "reader"))));
}

/**
 * Search results packed under a hard token budget (`pare pack`): the policy's `[pack]`
 * section names the response's fields (default: `id`, `score`, `text`, `path` under `results`).
 */
function pack(results, options) {
  const o = checkKeys(options, ["budget", "policy", "level", "tokenizer", "cursor", "query"], "pack");
  const budget = optBudget(o.budget);
  if (budget === undefined) throw new TypeError("pack: options.budget is required");
  if (o.policy !== undefined && o.policy !== null && !(o.policy instanceof Policy)) {
    throw new TypeError(`pack: options.policy must be a Policy, not ${describe(o.policy)}`);
  }
  const level = optString(o.level, "level");
  const tokenizer = optString(o.tokenizer, "tokenizer");
  const cursor = optString(o.cursor, "cursor");
  const query = optString(o.query, "query");
  const [out] = withInput(results, (r) => native.pack(r, budget, o.policy ? o.policy._native : undefined, level, tokenizer, cursor, query));

  return {
    text: out.text,
    tokens: out.tokens,
    nextCursor: out.nextCursor ?? null,
    metrics: JSON.parse(out.metrics),
    toString() {
      return this.text;
    },
  };
}

/** Where a payload's tokens go (`pare stats --json`): tokens, bytes, waste, and the costliest paths. */
function stats(value, options) {
  const o = checkKeys(options, ["tokenizer", "top"], "stats");
  if (o.top !== undefined && (!Number.isSafeInteger(o.top) || o.top < 0)) {
    throw new TypeError(`stats: top must be a whole number >= 0, not ${describe(o.top)}`);
  }
  const tokenizer = optString(o.tokenizer, "tokenizer");
  return JSON.parse(withInput(value, (v) => native.stats(v, tokenizer, o.top))[0]);
}

/** The MCP TypeScript SDK integration (mcp.js): `mcp.shape(server, policy, options)` for a whole server, `mcp.tools(policy, options)` for chosen tool handlers. */
const mcp = require("./mcp.js").makeMcp({ native, Policy, typed });
/** The Express middleware: `app.use(express(policy, { maxBody }))` (express.js). */
const express = require("./express.js").makeExpress({ native, Policy, typed });
/** The Fastify plugin: `await app.register(fastify(policy, { maxBody }))` (fastify.js). */
const fastify = require("./fastify.js").makeFastify({ native, Policy, typed });

module.exports = {
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
  version: native.version(),
  build: native.buildProfile(),
};
