// End-to-end check of `r2r-mcp serve` with the official MCP TypeScript SDK client.
//
// Run by server/e2e_test.go (TestE2ETypeScriptClient) against the R2R emulator:
//   R2R_MCP_BIN=/path/to/r2r-mcp R2R_MCP_PROJECT=/path/to/git/project \
//   R2R_MCP_FILE=docs/guide.md R2R_MCP_EXPECT=<word in that file> R2R_MCP_TOOLS=<names,…> node e2e.mjs
// The server inherits this process's environment (R2R_API_URL etc.). Exits non-zero with a
// message on stderr at the first failed step.
import { call, check, connectStdio, ingest, need, text } from "./lib.mjs";

// The tools the server must list: the Go test passes its own list (one list, in Go).
const EXPECTED_TOOLS = need("R2R_MCP_TOOLS").split(",");

// expectToolError calls a tool that must fail with an isError result (never a thrown
// protocol error) whose text names the next step and whose _meta carries the error code.
async function expectToolError(client, name, args, code, type, nextStep) {
  let result;
  try {
    result = await client.callTool({ name, arguments: args });
  } catch (err) {
    throw new Error(`${name} ${JSON.stringify(args)}: the SDK threw instead of returning an error result: ${err}`);
  }
  const t = text(result);
  check(result.isError === true, `${name} ${JSON.stringify(args)}: isError is ${result.isError}: ${t}`);
  check(t.includes(nextStep), `${name}: error text lacks the next step ${JSON.stringify(nextStep)}: ${t}`);
  check(result.structuredContent === undefined, `${name}: error result carries structuredContent`);
  const meta = result._meta?.["r2r-mcp/error"];
  check(meta?.code === code && meta?.type === type && typeof meta?.retryable === "boolean",
    `${name}: _meta["r2r-mcp/error"] = ${JSON.stringify(meta)}, want code ${code} type ${type}`);
  return result;
}

// checkPrompts lists the prompts, renders each, and completes a collection name (the
// project's collection exists once a file is ingested).
async function checkPrompts(client) {
  const { prompts } = await client.listPrompts();
  const names = prompts.map((p) => p.name).sort();
  check(JSON.stringify(names) === JSON.stringify(["ask", "remember", "resume", "search", "sync"]), `prompts/list returned ${names.join(", ")}`);
  for (const p of prompts) {
    check(p.description && p.arguments.every((a) => a.description), `prompt ${p.name} lacks descriptions`);
  }
  const renders = {
    ask: [{ question: "What does the flux capacitor need?" }, "r2r_rag_query"],
    search: [{ query: "flux capacitor" }, "r2r_search"],
    sync: [{}, '"dry_run":true'],
    remember: [{ note: "The flux capacitor needs 1.21 gigawatts" }, "r2r_remember"],
    resume: [{}, '"kind":"checkpoint"'],
  };
  for (const [name, [args, tool]] of Object.entries(renders)) {
    const res = await client.getPrompt({ name, arguments: args });
    const msg = res.messages[0];
    check(msg?.role === "user" && msg.content.type === "text" && msg.content.text.includes(tool),
      `prompt ${name} does not name ${tool}: ${JSON.stringify(res)}`);
  }
  const done = await client.complete({
    ref: { type: "ref/prompt", name: "sync" },
    argument: { name: "collection", value: "claude-code" },
  });
  check(done.completion.values.some((v) => v.startsWith("claude-code-")),
    `completion of sync's collection: ${JSON.stringify(done.completion)}`);
  console.log(`prompts: ${names.join(", ")}; completion: ${done.completion.values.join(", ")}`);
}

// checkLooseArguments sends arguments the way models do and checks they are read as the
// schema says, with what was read in _meta.
async function checkLooseArguments(client, file) {
  const res = await call(client, "r2r_search", { query: "flux", search_mode: "hybrid", limit: "3", filters: "{}" });
  check(res.structuredContent.search_mode === "advanced" && res.structuredContent.limit === 3,
    `loose search arguments were not read: ${JSON.stringify(res.structuredContent)}`);
  const read = (res._meta?.["r2r-mcp/arguments-read"] ?? []).map((m) => m.argument).sort();
  check(JSON.stringify(read) === JSON.stringify(["filters", "limit", "search_mode"]), `arguments read: ${JSON.stringify(res._meta)}`);
  await call(client, "r2r_ingest_document", { path: file });
  await expectToolError(client, "r2r_ingest_document", { path: file, file_path: file }, -32602, "invalid_params", "did you mean");
  console.log("loose arguments: ok");
}

async function main() {
  const bin = need("R2R_MCP_BIN");
  const project = need("R2R_MCP_PROJECT");
  const file = need("R2R_MCP_FILE");
  const expect = need("R2R_MCP_EXPECT");

  const client = await connectStdio("r2r-mcp-ts-e2e", bin, project);

  const info = client.getServerVersion();
  check(info?.name === "r2r-mcp", `server name is ${info?.name}`);
  check((client.getInstructions() ?? "").includes("r2r_search"), "instructions do not mention r2r_search");
  console.log(`initialized: ${info.name} ${info.version}`);

  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  check(
    JSON.stringify(names) === JSON.stringify([...EXPECTED_TOOLS].sort()),
    `tools/list returned ${names.join(", ")}`,
  );
  console.log(`tools: ${names.length}`);

  // Error results carry no structuredContent (the SDK validates it against the tool's
  // outputSchema even when isError is set, and would throw -32602 instead of showing the
  // text); the structured error data is in _meta["r2r-mcp/error"].
  await expectToolError(client, "r2r_search", { query: 5 }, -32602, "invalid_params", "Fix the arguments");
  await expectToolError(
    client,
    "r2r_get_document",
    { document_id: "00000000-0000-4000-8000-000000000000" },
    -32001,
    "not_found",
    "r2r_list_documents",
  );
  console.log("error results: ok");

  await call(client, "r2r_search", { query: expect });
  console.log("search before ingestion: ok");

  const docId = await ingest(client, file, { polls: 100, intervalMs: 50 });
  console.log("monitor: success");

  const found = await call(client, "r2r_search", { query: expect, limit: 5 });
  const hits = found.structuredContent?.results ?? [];
  check(hits.some((h) => h.document_id === docId), `search did not find the ingested document: ${text(found)}`);
  console.log(`search after ingestion: ${hits.length} hit(s)`);

  await checkPrompts(client);
  await checkLooseArguments(client, file);

  await client.close();
  console.log("ok");
}

main().catch((err) => {
  console.error(`ts-client e2e FAILED: ${err?.stack ?? err}`);
  process.exit(1);
});
