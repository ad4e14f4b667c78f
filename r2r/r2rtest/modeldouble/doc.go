// Package modeldouble is an OpenAI-compatible model server for tests: it gives a real R2R
// server the embeddings and chat completions it asks for, deterministically and without a
// model, so R2R can ingest, search and answer on a machine with no model provider.
//
// The Double is an http.Handler; it serves every route both under /v1 and at the root, since
// OpenAI clients are configured with either form of base URL:
//
//   - POST /v1/embeddings: a hashed bag of words (lower-cased word tokens and their bigrams,
//     signed feature hashing, sublinear term frequency), L2-normalised to exactly the
//     dimensions asked. Texts that share words are close in cosine distance. The vector is
//     never all zero, even for an empty or punctuation-only input, because an all-zero vector
//     has no cosine distance. Inputs may be a string, a list of strings, or token arrays;
//     encoding_format "float" (default) or "base64" (little-endian float32, as the OpenAI
//     SDKs decode it). With Options.EmbeddingsUpstream set, embeddings requests are
//     forwarded as they came to that OpenAI-compatible server instead (testdata/r2r-real
//     points it at a real embedding model).
//   - POST /v1/chat/completions: plain or streamed (server-sent chat.completion.chunk events,
//     each with one choice, ending with a finish_reason chunk and "data: [DONE]"). The reply
//     is extractive: for R2R's RAG prompt (a user message with "### Query:" and
//     "### Context:" blocks whose sources start with "Source ID [abc1234]:") it picks the
//     context sentences that best match the query and cites them with their bracketed source
//     ids, which R2R turns into citations. When the request offers tools and the last message
//     is the user's, it calls the search tool with the user's text as "query"; after a tool
//     message it answers from the tool's result. Any other prompt gets a short extract of
//     its own text. max_tokens (or max_completion_tokens) bounds the reply in words.
//   - GET /v1/models: the default models and every model name requests have used.
//
// Replies carry exactly the fields R2R validates (id, object, created, model, choices with
// index, message and a finish_reason of stop, length or tool_calls, usage) and nothing it
// rejects (no service_tier). Bad requests get OpenAI's error body
// {"error":{"message":…,"type":"invalid_request_error",…}} with status 400 (404, 405 or 413
// where those fit). Request bodies are bounded (Options.MaxBodyBytes), and so is the size of
// an embeddings reply.
//
// The runnable command is r2r/r2rtest/model-double.
package modeldouble
