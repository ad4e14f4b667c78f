// End-to-end check of `r2r-mcp serve` against a real R2R with the official MCP TypeScript SDK:
// ingest a Markdown file and a PDF from a project, monitor until success, find each by search
// with its title, read the PDF's extracted text back, get a cited RAG answer, and list the
// documents and collections; then team memory: remember, recall by a pasted error,
// checkpoint and resume, forget.
//
// Run by server/e2ereal (TestRealTypeScriptClient) when a real R2R is up (make test-real):
//   R2R_MCP_BIN=... R2R_MCP_PROJECT=... R2R_MCP_MD=docs/x.md R2R_MCP_MD_PHRASE=... \
//   R2R_MCP_PDF=docs/y.pdf R2R_MCP_PDF_PHRASE=... R2R_MCP_QUESTION=... node real.mjs
// The server inherits this process's environment (R2R_API_URL and credentials). Exits
// non-zero with a message on stderr at the first failed step; prints "ok" last.
import { call, check, connectStdio, ingest, need, text } from "./lib.mjs";

// findByTitle searches for phrase and checks the document is among the hits, titled by its
// project path, in both the structured value and the text.
async function findByTitle(client, phrase, id, title) {
  const res = await call(client, "r2r_search", { query: phrase, limit: 5 });
  const hits = res.structuredContent.results ?? [];
  const hit = hits.find((h) => h.document_id === id);
  check(hit, `search ${JSON.stringify(phrase)} did not find ${id}: ${text(res)}`);
  check(hit.title === title, `hit title is ${JSON.stringify(hit.title)}, want ${JSON.stringify(title)}`);
  check(text(res).includes(title), `search text does not name ${title}: ${text(res)}`);
  console.log(`search ${JSON.stringify(phrase)}: ${title} at rank ${hits.indexOf(hit) + 1} of ${hits.length}`);
}

// memories runs team memory through the SDK: remember a fix, find it by pasting its error,
// save two checkpoints and resume from the newest, then forget the fix.
async function memories(client) {
  const fix = await call(client, "r2r_remember", {
    kind: "fix",
    title: "Payout export times out",
    error: "context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
    body: "The payout export calls the bank API without a deadline of its own; give it 30 s and retry twice.",
  });
  const fixID = fix.structuredContent.id;
  check(fix.structuredContent.status === "saved", `remember: ${text(fix)}`);
  const again = await call(client, "r2r_remember", {
    kind: "fix",
    title: "Payout export times out",
    error: "context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
    body: "The payout export calls the bank API without a deadline of its own; give it 30 s and retry twice.",
  });
  check(again.structuredContent.status === "already_remembered", `remember again: ${text(again)}`);
  const pasted = 'payouts: export failed: Post "https://bank.example/v1/batches": context deadline exceeded (Client.Timeout exceeded while awaiting headers)';
  const byError = await call(client, "r2r_recall", { query: pasted });
  const top = byError.structuredContent.memories ?? [];
  check(top.slice(0, 3).some((m) => fixID.startsWith(m.id)), `recall by pasted error lacks the fix: ${text(byError)}`);
  check(text(byError).length <= 2000 && JSON.stringify(byError.structuredContent).length <= 2000, "recall index over 2,000 bytes");
  console.log(`recall by pasted error: the fix at rank ${top.findIndex((m) => fixID.startsWith(m.id)) + 1}`);

  await call(client, "r2r_remember", { kind: "checkpoint", title: "Export retries, part 1", body: "Done: deadline added. Next: retries." });
  await call(client, "r2r_remember", { kind: "checkpoint", title: "Export retries, part 2", body: "Done: retries. Next: alerting." });
  const resume = await call(client, "r2r_recall", { kind: "checkpoint" });
  const cps = resume.structuredContent.memories ?? [];
  check(cps[0]?.title === "Export retries, part 2", `resume: newest checkpoint first, got ${text(resume)}`);
  console.log("checkpoint resume: ok");

  const gone = await call(client, "r2r_forget", { memory_id: fixID });
  check(gone.structuredContent.deleted === true, `forget: ${text(gone)}`);
  const after = await call(client, "r2r_recall", { kind: "fix" });
  check((after.structuredContent.memories ?? []).length === 0, `fix still recalled after forget: ${text(after)}`);
  console.log("remember / recall / forget: ok");
}

async function main() {
  const bin = need("R2R_MCP_BIN");
  const project = need("R2R_MCP_PROJECT");
  const md = need("R2R_MCP_MD");
  const mdPhrase = need("R2R_MCP_MD_PHRASE");
  const pdf = need("R2R_MCP_PDF");
  const pdfPhrase = need("R2R_MCP_PDF_PHRASE");
  const question = need("R2R_MCP_QUESTION");

  const client = await connectStdio("r2r-mcp-ts-real", bin, project);
  console.log(`initialized: ${client.getServerVersion()?.name}`);

  const status = await call(client, "r2r_status", {});
  check(/healthy|ok/i.test(text(status)), `r2r_status does not report R2R healthy: ${text(status)}`);

  const mdID = await ingest(client, md);
  const pdfID = await ingest(client, pdf);
  await findByTitle(client, mdPhrase, mdID, md); // r2r-mcp titles a document by its project path
  await findByTitle(client, pdfPhrase, pdfID, pdf);

  const doc = await call(client, "r2r_get_document", { document_id: pdfID });
  const body = text(doc);
  check(body.includes(pdfPhrase), `r2r_get_document of the PDF lacks its text: ${body.slice(0, 400)}`);
  check(!body.includes("%PDF"), "r2r_get_document returned the PDF's bytes, not its text");
  console.log(`get_document: the PDF's extracted text (${body.length} chars)`);

  const rag = await call(client, "r2r_rag_query", { question });
  const answer = text(rag);
  const sc = JSON.stringify(rag.structuredContent);
  check(/\[[0-9a-f]{7,8}\]/.test(answer), `RAG answer has no [shortid] citation: ${answer}`);
  check(sc.includes(mdID) || sc.includes(pdfID), `RAG sources name neither document: ${sc}`);
  console.log(`rag: cited answer (${answer.length} chars)`);

  const docs = await call(client, "r2r_list_documents", {});
  const listed = JSON.stringify(docs.structuredContent);
  check(listed.includes(mdID) && listed.includes(pdfID), `r2r_list_documents lacks a document: ${text(docs)}`);
  const cols = await call(client, "r2r_list_collections", {});
  const mine = (cols.structuredContent.collections ?? []).find((c) => c.current_project);
  check(mine?.name?.startsWith("claude-code-"), `r2r_list_collections lacks the project's collection: ${text(cols)}`);
  // R2R 3.6.6's own document_count misses documents filed by metadata; r2r-mcp counts them.
  check(mine.document_count === 2, `the project's collection counts ${mine.document_count} documents, want 2`);
  console.log("list documents and collections: ok");

  await memories(client);

  await client.close();
  console.log("ok");
}

main().catch((err) => {
  console.error(`ts-client real FAILED: ${err?.stack ?? err}`);
  process.exit(1);
});
