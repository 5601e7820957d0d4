// The official TypeScript SDK's client (@modelcontextprotocol/sdk) over stdio, for
// tests/mcp_structured.rs: lists the tools (the SDK keeps their outputSchema and validates
// every result of a tool that declares one, refusing a result without structuredContent),
// calls each tool named in argv[2] (comma-separated) and follows its pages with pare_more.
// Prints {walks: {tool: [result, ...]}} as JSON, or exits 1 with the SDK's error.
//
//   NODE_PATH=/tmp/pare-mcp-peers/node_modules node ts_client.cjs TOOLS COMMAND [ARGS]...
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");

async function main() {
  const [tools, command, ...args] = process.argv.slice(2);
  const transport = new StdioClientTransport({ command, args, stderr: "inherit" });
  const client = new Client({ name: "pare-test", version: "1.0.0" });
  await client.connect(transport);
  const listed = await client.listTools();
  const out = { tools: listed.tools.map((t) => ({ name: t.name, outputSchema: t.outputSchema ?? null })), walks: {} };
  for (const name of tools.split(",")) {
    let r = await client.callTool({ name, arguments: {} });
    const pages = [r];
    let cursor = r._meta?.pare?.nextCursor;
    while (cursor && pages.length < 500) {
      r = await client.callTool({ name: "pare_more", arguments: { cursor } });
      pages.push(r);
      cursor = r._meta?.pare?.nextCursor;
    }
    out.walks[name] = pages;
  }
  await client.close();
  process.stdout.write(JSON.stringify(out));
}

main().catch((e) => {
  console.error(`ts_client: ${e.stack || e}`);
  process.exit(1);
});
