// Package r2rtest is an in-memory emulator of the R2R 3.6.6 v3 HTTP API, used as a stand-in
// for a real R2R server in tests and by the runnable r2r-emulator command. The conformance
// suite (package r2r/conformance) runs the same checks against it and against a real R2R.
//
// The Emulator is an http.Handler; NewServer puts one behind a loopback listener for a test.
// It keeps users, API keys, collections, documents and chunks in memory and speaks R2R's wire
// format: {"results":…} envelopes with total_entries on lists, optional fields present as
// null, 202 on document creation, deterministic UUIDv5 ids, R2R's exact error messages and
// its four error body shapes, and FastAPI's 422 validation lists.
//
// Fault knobs (Configure, ForceStatus, ForceResponse, ExpireTokens, Down) can be changed
// while requests are served; Count, Counts, LastRequest and Cancelled let tests observe
// what clients sent (requests to unknown routes are counted as "METHOD (unknown)" without
// their bodies, and recorded bodies are capped at MaxRecordedBody). StepIngestion and
// Ingesting drive and observe background ingestion deterministically; IngestionStarted and
// IngestionEnded signal it. SyncBuffer is a goroutine-safe buffer for captured logs. Tests
// wait for what they observe with Await, woken by Changed (of the Emulator or a SyncBuffer)
// rather than by a clock.
//
// Emulated behaviour worth knowing:
//
//   - Authentication: password users (salted SHA-256, not bcrypt), HS256 JWTs with R2R's
//     claims, refresh-token rotation with reuse detection, logout blacklisting, API keys
//     key_XXXX.YYYY via X-API-Key or Bearer. Without RequireAuth, requests without credentials
//     act as admin@example.com (a superuser); bad credentials are still rejected.
//   - Ingestion: with IngestDelay 0 (or run_with_orchestration=false) documents are ingested
//     synchronously, as R2R's "simple" orchestrator does; otherwise the call returns at once
//     with a task_id (as with hatchet) and the document moves pending → parsing → embedding →
//     storing → success, one step per IngestDelay (or per StepIngestion call). Chunks become
//     searchable at success. Deleting or re-ingesting a document ends its running ingestion
//     at the next step. Restart stands for R2R killed and started again: running ingestions
//     end where they are, and GET /v3/system/status (superusers only) reports the new start.
//   - Document ids: the 409 duplicate check sees only the caller's own documents, as in
//     R2R; an id that belongs to another owner is taken over, as R2R's upsert does: owner,
//     metadata, collections, file and chunks become the caller's. A refused duplicate (409)
//     still replaces the stored file that download returns, as R2R stores the upload
//     before its duplicate check.
//   - Timestamps: microseconds with a Z suffix by default, as R2R 3.6.6 sends them;
//     Options.TimeFormat switches to +00:00 or to no offset at all.
//   - Parsing: text types must be valid UTF-8, otherwise ingestion fails the way R2R's text
//     parsers do ("'utf-8' codec can't decode byte …"). Markdown is reduced to the text of
//     its Python-Markdown rendering and HTML to its text, as R2R does; CSV and TSV rows are
//     parsed (and chunked) one by one, fields joined by ", "; JSON becomes R2R's indented
//     "key: value" text (invalid JSON answers 400 and fails the document); other text types
//     are kept as they are (R2R restructures code and RST files: not emulated). Other types (pdf, docx,
//     images…) are not really parsed: runs of printable text stand in for the extracted text. An empty or
//     blank text file is ingested without chunks; any other document without text fails
//     ("no text content could be extracted"). Failures end in ingestion_status "failed" with
//     metadata.failure in the collections its metadata named; synchronously they answer 500
//     R2RDocumentProcessingError.
//   - Chunking: R2R's recursive splitter (blank lines, then lines, then spaces, then
//     characters), at most Options.ChunkSize characters, consecutive chunks sharing up to
//     Options.ChunkOverlap characters (1024 and 512 by default, as R2R ships; no overlap
//     with another ChunkSize unless asked); ingestion_config.chunk_size and chunk_overlap
//     override them per document.
//   - Search: BM25 with a boost for query terms in the document's title, squashed into 0..1,
//     stands in for embeddings. Semantic and hybrid
//     search rank every chunk that passes the filters, like a vector search; full-text-only
//     search returns only chunks sharing a term with the query.
//   - Filters: R2R's filter language over chunks, re-implemented from
//     py/core/providers/database/filters.py with SQL NULL semantics. Errors R2R would raise
//     while building the SQL are FilterError 500s; errors Postgres/asyncpg would raise are
//     emulated for the common cases (unknown chunk column created_at/updated_at/status/type,
//     invalid UUID parameters). Unlike Postgres, a failed ::numeric or ::boolean cast of a
//     metadata value does not match instead of failing the whole query.
//   - RAG: the answer is extractive: the (at most three) prose sentences of the top three
//     chunks sharing the most query terms, in rank order, each run from one chunk followed by
//     its [shortid] citation; max_tokens(_to_sample) caps it in words. Streaming
//     (rag_generation_config.stream) emits R2R's SSE event sequence.
//   - Rate limiting: like R2R, all guarded routes are checked, only POST/DELETE are logged,
//     and a request is refused once more than RateLimit requests were logged in the last
//     minute (so RateLimit+1 requests pass). Superusers are never limited.
//
// Not emulated: graph search (always []), web search, agents, conversations, per-user
// quotas and limits_overrides, email verification, OAuth, the users admin routes (but DELETE /v3/users/{id}), exports.
// Like R2R, whose count is a window function over the page's query, a list page past the
// end has total_entries 0.
package r2rtest
