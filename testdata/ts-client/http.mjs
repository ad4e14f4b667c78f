// End-to-end check of `r2r-mcp serve --http` with the official MCP TypeScript SDK's
// Streamable HTTP client (protocol 2025-11-25).
//
// Run by server/httpserve (TestTypeScriptClientOverHTTP):
//   R2R_MCP_URL=http://127.0.0.1:PORT/mcp R2R_MCP_KEY=<R2R API key> R2R_MCP_EXPECT=<word the
//   user's documents hold> R2R_MCP_FORBIDDEN=<word only another user's documents hold>
//   R2R_MCP_TOOLS=<comma-separated registry> node http.mjs
// Exits non-zero with a message on stderr at the first failed step.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { check, need, text } from "./lib.mjs";

async function connect(url, key) {
  const client = new Client({ name: "r2r-mcp-http-check", version: "0.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  return client;
}

const url = need("R2R_MCP_URL");
const key = need("R2R_MCP_KEY");
const expect = need("R2R_MCP_EXPECT");
const forbidden = need("R2R_MCP_FORBIDDEN");
const wantTools = need("R2R_MCP_TOOLS").split(",").sort();

const client = await connect(url, key);
const version = client.getServerVersion();
check(version?.name === "r2r-mcp", `server name ${JSON.stringify(version)}`);
console.log(`connected: ${version.name} ${version.version}`);

const { tools } = await client.listTools();
const names = tools.map((t) => t.name).sort();
check(JSON.stringify(names) === JSON.stringify(wantTools), `tools/list ${names} != registry ${wantTools}`);
console.log(`tools: ${names.join(" ")}`);

const result = await client.callTool({ name: "r2r_search", arguments: { query: "payout queue worker" } });
const out = text(result) + JSON.stringify(result.structuredContent ?? {});
check(!result.isError, `r2r_search failed: ${out}`);
check(out.includes(expect), `r2r_search lacks the user's document (${expect}): ${out}`);
check(!out.includes(forbidden), `r2r_search returned another user's document (${forbidden}): ${out}`);
console.log(`search: ${result.structuredContent?.count} hits, own document found, none of another user's`);
await client.close();

// A wrong key must fail the connection (401), never reach a tool.
let refused = false;
try {
  const bad = await connect(url, `${key}-wrong`);
  await bad.close();
} catch (err) {
  refused = /401|Unauthorized|invalid_token/i.test(String(err?.message ?? err) + String(err?.code ?? ""));
  console.log(`wrong key refused: ${String(err?.message ?? err).slice(0, 120)}`);
}
check(refused, "a wrong key was accepted");
console.log("ok");
