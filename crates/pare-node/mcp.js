// Shape an in-process MCP server's tool results, as `pare mcp` shapes them through a proxy.
//
//   const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
//   const { Policy, mcp } = require("pare-llm");
//   const server = new McpServer({ name: "entities", version: "1.0.0" });
//   server.registerTool("list_entities", { description: "…" }, async () => ({ content: [...] }));
//   mcp.shape(server, Policy.fromFile("entities.toml"), { maxTokens: 20000 });
//
// One call wraps the server's `tools/list` and `tools/call` handlers with the engine's MCP
// mapping (`pare::mcp`, the code `pare mcp` runs): shaped tools gain the `detail` argument
// (where the policy's levels differ), results are shaped at the tool's level, lowered to fit
// the budget or paged, a result shown in part names its original, and `pare_more` (listed
// once needed) returns later pages and originals. Nothing is rewritten here: messages cross
// to the engine as the JSON the wire would carry, so the bytes are `pare mcp`'s.
//
// Works with the TypeScript SDK's `McpServer` and its low-level `Server` (anything with the
// SDK's request-handler table). Call it after the server's first tool is registered (the
// SDK installs the tools handlers then); tools registered later are shaped too.
"use strict";

const INVALID_PARAMS = -32602;

function lowLevel(server) {
  for (const c of [server, server && server.server]) {
    if (c && c._requestHandlers instanceof Map && typeof c.setRequestHandler === "function") return c;
  }
  throw new TypeError(
    "mcp.shape: not an MCP server of the TypeScript SDK (an McpServer, or its low-level Server)",
  );
}

function makeMcp({ native, Policy, typed }) {
  /**
   * Shape `server`'s tool results with `policy` (its `[mcp]` section; without a policy, the
   * built-in one, which is lossless) under `maxTokens` (and `maxChars4`, by chars/4) per
   * result page. Returns `server`.
   */
  function shape(server, policy, options = {}) {
    const { session, warn } = sessionFor(policy, options, "mcp.shape");
    const low = lowLevel(server);
    const handlers = low._requestHandlers;
    const listing = handlers.get("tools/list");
    const calling = handlers.get("tools/call");
    if (!listing || !calling) {
      throw new Error("mcp.shape: the server has no tools/list or tools/call handler yet (register its tools first)");
    }
    let learned = false;

    handlers.set("tools/list", async (request, extra) => {
      const result = await listing(request, extra);
      const listed = call(typed, () => session.listTools(JSON.stringify(result)));
      learned = true;
      for (const w of listed.warnings) warn(w);
      return JSON.parse(listed.result);
    });

    // What pare adds to each tool (`detail`, parameters) is learned from the server's own
    // list when a call comes before any `tools/list` in this process (a restarted server):
    // otherwise the tool would get arguments it does not take.
    async function learn(extra) {
      let cursor;
      do {
        const request = { method: "tools/list", params: cursor === undefined ? {} : { cursor } };
        const result = await listing(request, extra);
        call(typed, () => session.listTools(JSON.stringify(result)));
        cursor = result && result.nextCursor;
      } while (cursor);
      learned = true;
    }

    handlers.set("tools/call", async (request, extra) => {
      if (!learned) await learn(extra);
      const params = request.params ?? {};
      return through(session, warn, String(params.name), params.arguments, (changed) =>
        calling(changed === undefined ? request : { ...request, params: { ...params, arguments: changed } }, extra),
        () => tellListChanged(low, warn),
      );
    });
    advertiseListChanged(low, warn);
    return server;
  }
  /**
   * The handler-level integration: for a server whose tools are registered one by one (or
   * a framework on the SDK), shape chosen tool handlers instead of the whole server.
   *
   *   const shaper = mcp.tools(policy, { maxTokens: 20000 });
   *   server.registerTool("search", { inputSchema: { q: z.string(), ...shaper.arguments("search", z) } },
   *     shaper.handler("search", async ({ q }) => ({ content: [...] })));
   *   shaper.registerMore(server, z);   // pare_more, for later pages and originals
   */
  function tools(policy, options = {}) {
    const { session, warn } = sessionFor(policy, options, "mcp.tools");
    // What pare adds to each tool's input schema, learned from the engine as `tools/list`
    // would show it: the session then knows the tool as `pare mcp` would.
    const added = new Map();
    const learn = (name) => {
      if (!added.has(name)) {
        const listing = { tools: [{ name, inputSchema: { type: "object", properties: {} } }] };
        const listed = JSON.parse(call(typed, () => session.listTools(JSON.stringify(listing))).result);
        added.set(name, listed.tools[0].inputSchema.properties ?? {});
      }
      return added.get(name);
    };
    return {
      /** The properties pare adds to tool `name`'s input schema (`detail`, parameters), as JSON Schema. */
      jsonSchema(name) {
        return structuredClone(learn(String(name)));
      },
      /** The same as a zod raw shape, to spread into the tool's `inputSchema` (pass the `z` you use). */
      arguments(name, z) {
        return zodShape(learn(String(name)), z, false);
      },
      /** `handler`, shaped as `pare mcp` shapes tool `name`'s results. */
      handler(name, handler) {
        name = String(name);
        if (typeof handler !== "function") throw new TypeError("mcp.tools(…).handler(name, handler): handler must be a function");
        learn(name);
        return (args, extra) => through(session, warn, name, args, (changed) => handler(changed === undefined ? args : changed, extra));
      },
      /** Register `pare_more` on an `McpServer` (later pages and originals), described as `pare mcp` lists it. */
      registerMore(server, z) {
        if (!server || typeof server.registerTool !== "function") throw new TypeError("registerMore(server, z): server must be an McpServer");
        const tool = JSON.parse(native.pareMoreTool());
        const properties = tool.inputSchema.properties;
        const shape = zodShape(properties, z, tool.inputSchema.required ?? []);
        return server.registerTool(
          tool.name,
          { description: tool.description, inputSchema: shape, annotations: tool.annotations },
          async (args) => {
            const asked = call(typed, () => session.callRequest(tool.name, JSON.stringify(args ?? {})));
            if (asked.kind === "more") return JSON.parse(asked.text);
            const e = new Error(asked.text ?? "pare_more: nothing to answer");
            e.code = INVALID_PARAMS;
            throw e;
          },
        );
      },
    };
  }

  /** The engine's MCP session for `policy` and the checked options of `who` (`mcp.shape`). */
  function sessionFor(policy, options, who) {
    const allowed = ["maxTokens", "maxChars4", "tokenizer", "onWarning"];
    for (const k of Object.keys(options ?? {})) {
      if (!allowed.includes(k)) throw new TypeError(`${who}: unknown option ${JSON.stringify(k)}; allowed: ${allowed.join(", ")}`);
    }
    if (policy !== undefined && policy !== null && !(policy instanceof Policy)) {
      throw new TypeError(`${who}: the policy must be a Policy (Policy.fromFile, …) or null`);
    }
    const maxTokens = options?.maxTokens ?? 20000;
    const maxChars4 = options?.maxChars4 ?? 25000;
    for (const [name, v] of [["maxTokens", maxTokens], ["maxChars4", maxChars4]]) {
      if (!Number.isSafeInteger(v) || v < 1 || v > 0xffffffff) throw new TypeError(`${who}: ${name} must be a whole number >= 1`);
    }
    const warn = options?.onWarning ?? ((m) => console.error(`pare: ${m}`));
    const session = call(typed, () =>
      new native.McpSession(policy ? policy._native : undefined, maxTokens, maxChars4, options?.tokenizer ?? "o200k_base"),
    );
    return { session, warn };
  }

  /**
   * One `tools/call` of `name` through the session, as `pare mcp` does it: `pare_more` and a
   * bad argument answered here; otherwise `run(changedArguments | undefined)` calls the tool
   * (with pare's arguments taken out when there were any) and its result is shaped.
   * `listChanged` is told when `pare_more` joined the tool list.
   */
  async function through(session, warn, name, args, run, listChanged = () => {}) {
    const asked = call(typed, () => session.callRequest(name, args === undefined ? undefined : JSON.stringify(args)));
    if (asked.kind === "more") return JSON.parse(asked.text);
    if (asked.kind === "invalid") {
      // Inside a handler the SDK turns a throw into an `isError` result.
      const e = new Error(asked.text);
      e.code = INVALID_PARAMS;
      throw e;
    }
    const handle = asked.handle ?? null;
    let result;
    try {
      result = await run(asked.text == null ? undefined : JSON.parse(asked.text));
    } catch (e) {
      if (handle !== null) session.forget(handle);
      throw e;
    }
    if (handle === null || result === null || typeof result !== "object" || !("content" in result)) {
      if (handle !== null) session.forget(handle);
      return result;
    }
    const out = call(typed, () => session.callResult(handle, JSON.stringify(result)));
    if (out.kind === "unchanged") warn(`\`${name}\` result sent unchanged: ${out.text}`);
    if (out.kind !== "shaped") return result;
    if (out.listChanged) listChanged();
    return JSON.parse(out.text);
  }

  return { shape, tools };
}

/** JSON Schema properties of the simple kinds pare adds, as a zod raw shape. */
function zodShape(properties, z, required) {
  if (!z || typeof z.string !== "function") throw new TypeError("pass the zod module (`import { z } from \"zod\"`) the server's schemas use");
  const shape = {};
  for (const [name, p] of Object.entries(properties)) {
    let t;
    if (Array.isArray(p.enum) && p.enum.every((v) => typeof v === "string") && p.enum.length > 0) t = z.enum(p.enum);
    else if (p.type === "string") t = z.string();
    else if (p.type === "number" || p.type === "integer") t = z.number();
    else if (p.type === "boolean") t = z.boolean();
    // `fields`: a list of strings (the engine also takes one comma-separated string).
    else if (p.type === "array" && p.items && p.items.type === "string") t = z.union([z.array(z.string()), z.string()]);
    else t = z.any();
    if (p.description) t = t.describe(p.description);
    if (!(Array.isArray(required) && required.includes(name))) t = t.optional();
    shape[name] = t;
  }
  return shape;
}

function call(typed, f) {
  try {
    return f();
  } catch (e) {
    throw typed(e);
  }
}

/** `notifications/tools/list_changed`: `pare_more` joined the list. */
function tellListChanged(low, warn) {
  if (typeof low.sendToolListChanged !== "function") return;
  Promise.resolve()
    .then(() => low.sendToolListChanged())
    .catch((e) => warn(`could not send tools/list_changed: ${e && e.message}`));
}

/** `capabilities.tools.listChanged: true`, as `pare mcp` sets it in `initialize`. */
function advertiseListChanged(low, warn) {
  try {
    const caps = typeof low.getCapabilities === "function" ? low.getCapabilities() : undefined;
    if (caps && caps.tools && caps.tools.listChanged) return;
    low.registerCapabilities({ tools: { listChanged: true } });
  } catch (e) {
    warn(`could not advertise tools.listChanged (shape the server before connecting it): ${e && e.message}`);
  }
}

module.exports = { makeMcp };
