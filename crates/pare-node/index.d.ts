// Types of pare-llm (index.js). Written by hand and checked by `tsc --strict` on the
// samples in test/types/ (scripts/test runs it).

/** Any JSON value, as `JSON.parse` gives it. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * What `shape` reads: JSON text (a string, Buffer or Uint8Array of UTF-8) or a value,
 * converted by `JSON.stringify`'s rules (`toJSON`, `undefined` and functions left out).
 */
export type Input = string | Uint8Array | unknown;

export type Format = "json" | "pretty" | "toon" | "auto";
export type TokenizerName = "o200k_base" | "cl100k_base" | "chars4";

export interface ShapeOptions {
  /** A level of the policy (default: its default level, lowered to fit `budget`). */
  level?: string;
  /** The policy's parameters, by name. */
  params?: Record<string, string | number | boolean>;
  /** Default `json`. */
  format?: Format;
  /** Default `o200k_base`. */
  tokenizer?: TokenizerName;
  /** A hard budget in tokens for each page, note included. */
  budget?: number;
  /** A page's `nextCursor`, with the same input and options. */
  cursor?: string;
  /** Say what the policy left out in `_omitted` notes (default: the policy's choice). */
  omitted?: boolean;
  /** The caller's question: a `[pack]` policy ranks the results by their relevance to it. */
  query?: string;
  /**
   * Only these fields of the shaped value, and what leads to them: member names found at any
   * depth (`"id"`, `"user.login"`) or JSONPath (`"$.items[*].id"`); comma-separated in a
   * string, or an array. The note says which fields were shown.
   */
  fields?: string | string[];
}

export interface ValueOptions {
  level?: string;
  params?: Record<string, string | number | boolean>;
}

/** The record of a page, with the keys `pare compact --report-json` uses. */
export interface ShapedRecord {
  tokenizer: string;
  format: string;
  level: string;
  tokens_before: number;
  tokens_after: number;
  note_tokens: number;
  page: number;
  pages: number;
  [key: string]: unknown;
}

/** One page of a shaped response: the text a model reads and the record of what happened. */
export declare class Shaped {
  private constructor();
  /** What `pare compact` prints with the same options (without the final newline). */
  readonly text: string;
  /** A line for the reader after the text; the budget covers text and note together. */
  readonly note: string | null;
  readonly tokenizer: string;
  /** `json`, `pretty`, `toon` (what `auto` chose), or `text`. */
  readonly format: string;
  /** The level shown. */
  readonly level: string;
  /** The level asked for, when it was lowered to fit the budget. */
  readonly loweredFrom: string | null;
  /** 1-based page number. */
  readonly page: number;
  readonly pages: number;
  /** Pass as `cursor` (with the same input and options) for the next page. */
  readonly nextCursor: string | null;
  readonly warnings: string[];
  /** Tokens of the input as given; counted when first read. */
  readonly tokensBefore: number;
  /** Tokens of `text`; counted when first read. */
  readonly tokensAfter: number;
  /** Tokens of `note`; 0 without one. */
  readonly noteTokens: number;
  /** `input`, `value`, `text` or `packed`. */
  readonly kind: string;
  /** What the policy removed, by kind: counts, never values. */
  readonly omitted: Record<string, number>;
  record(): ShapedRecord;
  toString(): string;
}

/** A compiled pare policy (TOML or JSON): which ops shape a payload, at which levels. */
export declare class Policy {
  private constructor();
  static fromFile(path: string | URL): Policy;
  static fromString(text: string): Policy;
  static fromObject(policy: Record<string, unknown>): Policy;
  static builtin(): Policy;
  /** Least detail first; the last is `full`. */
  readonly levels: string[];
  readonly defaultLevel: string;
  readonly description: string | null;
  readonly params: Record<string, unknown>;
  readonly source: string | null;
  readonly path: string | null;
  shape(input: Input, options?: ShapeOptions): Shaped;
  pages(input: Input, options: ShapeOptions & { budget: number }): Shaped[];
  shapeValue(input: Input, options?: ValueOptions): Json;
  shapeAsync(input: Input, options?: ShapeOptions): Promise<Shaped>;
  pagesAsync(input: Input, options: ShapeOptions & { budget: number }): Promise<Shaped[]>;
  shapeValueAsync(input: Input, options?: ValueOptions): Promise<Json>;
  toString(): string;
}

export declare class PareError extends Error {}
export declare class PolicyError extends PareError {
  readonly key?: string;
  readonly value?: string;
  readonly allowed?: string[];
  readonly kind?: "syntax" | "unknown_key" | "unknown_value" | "missing_key" | "wrong_type" | "bad_value";
  readonly line?: number;
  readonly column?: number;
}
export declare class JsonError extends PareError {
  readonly line?: number;
  readonly column?: number;
  readonly offset: number;
}
export declare class CursorError extends PareError {}
export declare class BudgetError extends PareError {}

export declare function countTokens(text: string, options?: { tokenizer?: TokenizerName }): number;
export declare function countTokensAsync(text: string, options?: { tokenizer?: TokenizerName }): Promise<number>;
export declare function encode(
  value: Input,
  options?: { format?: Format; tokenizer?: TokenizerName; onWarning?: (message: string) => void },
): string;
export declare function expand(text: string, options?: { reader?: "detect" | "json" | "toon" }): Json;

export interface Packed {
  text: string;
  tokens: number;
  nextCursor: string | null;
  /** Seed 003's metrics, and where each chunk went and why. */
  metrics: Record<string, unknown>;
  toString(): string;
}
export declare function pack(
  results: Input,
  options: { budget: number; policy?: Policy; level?: string; tokenizer?: TokenizerName; cursor?: string; query?: string },
): Packed;
export declare function stats(value: Input, options?: { tokenizer?: TokenizerName; top?: number }): Record<string, unknown>;

export declare const version: string;
/** `debug` or `release`. */
export declare const build: "debug" | "release";

/** Options of `mcp.shape`. */
export interface McpShapeOptions {
  /** Each result page's hard limit by `tokenizer` (default 20000), as `pare mcp --max-tokens`. */
  maxTokens?: number;
  /** Each page's limit by chars/4 (default 25000), as `pare mcp --max-chars4`. */
  maxChars4?: number;
  tokenizer?: TokenizerName;
  /** Where warnings go (default: stderr, `pare: …`). */
  onWarning?: (message: string) => void;
}

/** The MCP TypeScript SDK integration (mcp.js). */
export declare const mcp: {
  /**
   * Shape every tool result of an `McpServer` (or its low-level `Server`) by the policy's
   * `[mcp]` section, as `pare mcp` does through a proxy. Call it after the first tool is
   * registered. Returns `server`.
   */
  shape<S extends object>(server: S, policy?: Policy | null, options?: McpShapeOptions): S;
  /** The handler-level integration: shape chosen tool handlers (one session for them and `pare_more`). */
  tools(policy?: Policy | null, options?: McpShapeOptions): McpToolShaper;
};

/** Shapes chosen tool handlers of a server, as `pare mcp` shapes those tools. */
export interface McpToolShaper {
  /** What pare adds to tool `name`'s input schema (`detail`, parameters), as JSON Schema properties. */
  jsonSchema(name: string): Record<string, Record<string, unknown>>;
  /** The same as a zod raw shape to spread into the tool's `inputSchema`; pass your `z`. */
  arguments(name: string, z: unknown): Record<string, any>;
  /** `handler`, shaped: it receives the arguments without pare's, and its result is shaped and paged. */
  handler<A, X, R>(name: string, handler: (args: A, extra: X) => R | Promise<R>): (args: A, extra: X) => Promise<R>;
  /** Register `pare_more` (later pages and originals) on an `McpServer`; pass your `z`. */
  registerMore(server: { registerTool: (...args: any[]) => unknown }, z: unknown): unknown;
}

/** A Connect-style middleware: Express, or a plain `node:http` server's handler chain. */
export type PareMiddleware = (
  req: import("node:http").IncomingMessage & { originalUrl?: string },
  res: import("node:http").ServerResponse,
  next: (err?: unknown) => void,
) => void;

/**
 * Express middleware shaping JSON responses by the policy's `[http]` routes, with the same
 * bodies and `X-Pare-*` headers as `pare http` in front of the app. Mount it before the routes.
 */
export declare function express(policy: Policy, options?: { maxBody?: number }): PareMiddleware;

/** A Fastify plugin (registered on the whole app) with the same rules as `express`. */
export declare function fastify(
  policy: Policy,
  options?: { maxBody?: number },
): (app: any, options: unknown, done: (err?: Error) => void) => void;
