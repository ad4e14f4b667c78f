// Helpers shared by the TypeScript SDK end-to-end scripts (e2e.mjs, real.mjs, http.mjs).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

// need returns the environment variable name, or throws when it is not set.
export function need(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
}

// check throws msg unless cond holds.
export function check(cond, msg) {
  if (!cond) throw new Error(msg);
}

// text joins a tool result's text content.
export function text(result) {
  return (result.content ?? [])
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("\n");
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// call calls a tool and throws unless it succeeded with a structured result.
export async function call(client, name, args) {
  const result = await client.callTool({ name, arguments: args });
  check(!result.isError, `${name} ${JSON.stringify(args)} failed: ${text(result)}`);
  check(result.structuredContent !== undefined, `${name}: no structuredContent`);
  return result;
}

// ingest uploads a project file and polls r2r_monitor_task every intervalMs, at most polls
// times, until R2R reports success; it returns the document id.
export async function ingest(client, file, { polls = 600, intervalMs = 100 } = {}) {
  const res = await call(client, "r2r_ingest_document", { file_path: file });
  const id = res.structuredContent.document_id;
  check(typeof id === "string" && id.length === 36, `ingest ${file} returned no document_id: ${text(res)}`);
  let status = "";
  for (let i = 0; i < polls && status !== "success"; i++) {
    const m = await call(client, "r2r_monitor_task", { document_id: id });
    status = m.structuredContent.ingestion_status;
    check(status !== "failed", `ingestion of ${file} failed: ${text(m)}`);
    if (status !== "success") await sleep(intervalMs);
  }
  check(status === "success", `ingestion of ${file} still ${status} after ${polls} polls`);
  console.log(`ingested ${file} as ${id}: success`);
  return id;
}

// connectStdio spawns `bin serve` in project with this process's environment and returns a
// connected client (initialize + notifications/initialized done).
export async function connectStdio(name, bin, project) {
  const transport = new StdioClientTransport({
    command: bin,
    args: ["serve"],
    cwd: project,
    env: { ...process.env },
    stderr: "inherit",
  });
  const client = new Client({ name, version: "1.0.0" });
  await client.connect(transport);
  return client;
}
