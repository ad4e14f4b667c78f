// Runs R2R's official JS SDK (r2r-js) against an R2R server — normally the r2r-mcp emulator
// started by r2r/r2rtest/jssdk_test.go with authentication required.
//
//   R2R_API_BASE=http://127.0.0.1:7272 node --test
//
// R2R_EMAIL / R2R_PASSWORD default to the emulator's dev user (dev@example.com / dev-password).
"use strict";

const { test } = require("node:test");
const assert = require("node:assert/strict");
const crypto = require("node:crypto");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { r2rClient } = require("r2r-js");

const BASE = (process.env.R2R_API_BASE || process.env.R2R_API_URL || "http://127.0.0.1:7272").replace(/\/+$/, "");
const EMAIL = process.env.R2R_EMAIL || "dev@example.com";
const PASSWORD = process.env.R2R_PASSWORD || "dev-password";
const RUN = crypto.randomBytes(4).toString("hex"); // keeps names unique on a long-lived server

// The SDK reads R2R_API_KEY from the environment; this script manages credentials itself.
delete process.env.R2R_API_KEY;

const client = new r2rClient(BASE, false);
const state = {};

async function rejectsWithStatus(promise, status, pattern) {
  await assert.rejects(promise, (err) => {
    const text = String(err && err.message);
    assert.match(text, new RegExp(`Status ${status}`), text);
    if (pattern) assert.match(text, pattern);
    return true;
  });
}

test("health needs no credentials", async () => {
  const res = await new r2rClient(BASE, false).system.health();
  assert.equal(res.results.message, "ok");
});

test("requests without credentials are rejected", async () => {
  await rejectsWithStatus(new r2rClient(BASE, false).users.me(), 401, /No credentials provided/);
});

test("login with a wrong password fails", async () => {
  await rejectsWithStatus(
    new r2rClient(BASE, false).users.login({ email: EMAIL, password: "wrong-" + RUN }),
    401,
    /Incorrect email or password/,
  );
});

test("login, me", async () => {
  const res = await client.users.login({ email: EMAIL, password: PASSWORD });
  assert.equal(res.results.accessToken.tokenType, "access");
  assert.equal(res.results.refreshToken.tokenType, "refresh");
  const me = await client.users.me();
  assert.equal(me.results.email, EMAIL);
  assert.match(me.results.id, /^[0-9a-f-]{36}$/);
  assert.ok(Array.isArray(me.results.collectionIds));
  state.userId = me.results.id;
});

test("refresh rotates tokens and invalidates the old refresh token", async () => {
  const oldRefresh = client.getRefreshToken();
  const res = await client.users.refreshAccessToken();
  assert.notEqual(res.results.refreshToken.token, oldRefresh);
  assert.equal((await client.users.me()).results.id, state.userId);

  const replay = new r2rClient(BASE, false);
  replay.setTokens("", oldRefresh);
  await rejectsWithStatus(replay.users.refreshAccessToken(), 401, /Token has been invalidated/);
});

test("auto-refresh retries a request rejected for an invalid token", async () => {
  const login = await new r2rClient(BASE, false).users.login({ email: EMAIL, password: PASSWORD });
  const tokens = { accessToken: "not-a-valid-token", refreshToken: login.results.refreshToken.token };
  const auto = new r2rClient(BASE, false, {
    enableAutoRefresh: true,
    getTokensCallback: () => tokens,
    setTokensCallback: (a, r) => {
      tokens.accessToken = a;
      tokens.refreshToken = r;
    },
  });
  auto.setTokens(tokens.accessToken, tokens.refreshToken);
  const me = await auto.users.me();
  assert.equal(me.results.email, EMAIL);
  assert.notEqual(tokens.accessToken, "not-a-valid-token");
});

test("collections: create, retrieve by name, list", async () => {
  const name = `sdk-check-${RUN}`;
  const created = await client.collections.create({ name, description: "created by r2r-js" });
  assert.equal(created.results.name, name);
  assert.equal(created.results.ownerId, state.userId);
  state.collectionId = created.results.id;

  // R2R 3.6.6 answers a duplicate name for the same owner with 409 "Collection with this ID already exists".
  await rejectsWithStatus(client.collections.create({ name }), 409, /already exists/);

  const byName = await client.collections.retrieveByName({ name });
  assert.equal(byName.results.id, state.collectionId);

  const got = await client.collections.retrieve({ id: state.collectionId });
  assert.equal(got.results.description, "created by r2r-js");

  const list = await client.collections.list({ limit: 1000 });
  assert.ok(list.totalEntries >= 2, "default collection plus the new one");
  assert.ok(list.results.some((c) => c.id === state.collectionId));
});

test("documents: create from raw text", async () => {
  const text =
    `The heliotrope protocol ${RUN} describes how lighthouse keepers exchange signals at dusk.\n\n` +
    "Each keeper flashes the lamp three times before the tide turns.";
  const res = await client.documents.create({
    raw_text: text,
    metadata: { title: `heliotrope-${RUN}`, topic: "lighthouses", year: 2024 },
  });
  assert.match(res.results.message, /successfully/);
  state.rawDocId = res.results.documentId;

  await rejectsWithStatus(client.documents.create({ raw_text: text }), 409, /already exists/);
});

test("documents: create from a file upload", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "r2r-js-"));
  const file = path.join(dir, `notes-${RUN}.md`);
  fs.writeFileSync(file, `# Notes ${RUN}\n\nQuartz gardens bloom under the violet moon of Kepler.\n`);
  try {
    const res = await client.documents.create({
      file,
      metadata: { topic: "astronomy" },
      collectionIds: [state.collectionId],
    });
    state.fileDocId = res.results.documentId;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const doc = await client.documents.retrieve({ id: state.fileDocId });
  assert.equal(doc.results.documentType, "md");
  assert.equal(doc.results.title, `notes-${RUN}.md`);
  assert.equal(doc.results.ingestionStatus, "success");
  assert.deepEqual(doc.results.collectionIds, [state.collectionId]);
});

test("documents: retrieve, list, chunks, metadata", async () => {
  const doc = await client.documents.retrieve({ id: state.rawDocId });
  assert.equal(doc.results.title, `heliotrope-${RUN}`);
  assert.equal(doc.results.metadata.version, "v0");
  assert.equal(doc.results.metadata.topic, "lighthouses");

  const list = await client.documents.list({ ids: [state.rawDocId, state.fileDocId] });
  assert.equal(list.totalEntries, 2);
  assert.deepEqual(list.results.map((d) => d.id).sort(), [state.rawDocId, state.fileDocId].sort());

  const chunks = await client.documents.listChunks({ id: state.rawDocId });
  assert.ok(chunks.totalEntries >= 1);
  assert.equal(chunks.results[0].documentId, state.rawDocId);
  // The SDK camel-cases every key client-side, metadata included (chunk_order -> chunkOrder).
  assert.equal(chunks.results[0].metadata.chunkOrder, 0);
  assert.match(chunks.results.map((c) => c.text).join(" "), /heliotrope protocol/);

  const patched = await client.documents.appendMetadata({ id: state.rawDocId, metadata: [{ reviewed: true }] });
  assert.equal(patched.results.metadata.reviewed, true);
  assert.equal(patched.results.metadata.topic, "lighthouses");
});

test("collections: add document, list documents", async () => {
  const added = await client.collections.addDocument({ id: state.collectionId, documentId: state.rawDocId });
  assert.match(added.results.message, /assigned/);
  await rejectsWithStatus(
    client.collections.addDocument({ id: state.collectionId, documentId: state.rawDocId }),
    409,
    /already assigned/,
  );
  const docs = await client.collections.listDocuments({ id: state.collectionId });
  assert.deepEqual(docs.results.map((d) => d.id).sort(), [state.rawDocId, state.fileDocId].sort());
});

test("search with filters", async () => {
  const res = await client.retrieval.search({
    query: "lighthouse keepers exchange signals at dusk",
    searchSettings: { limit: 5, filters: { topic: { $eq: "lighthouses" } } },
  });
  const hits = res.results.chunkSearchResults;
  assert.ok(hits.length >= 1);
  assert.equal(hits[0].documentId, state.rawDocId);
  assert.ok(hits.every((h) => h.metadata.topic === "lighthouses"));
  assert.ok(hits[0].score > 0 && hits[0].score <= 1);
  assert.deepEqual(res.results.graphSearchResults, []);

  const inCollection = await client.retrieval.search({
    query: "quartz gardens violet moon",
    searchSettings: { filters: { document_id: { $eq: state.fileDocId } } },
  });
  assert.equal(inCollection.results.chunkSearchResults[0].documentId, state.fileDocId);

  await rejectsWithStatus(client.retrieval.search({ query: "" }), 400, /Query cannot be empty/);
  await rejectsWithStatus(
    client.retrieval.search({ query: "x", searchSettings: { filters: { id: { $neq: "y" } } } }),
    500,
    /Unsupported operator/,
  );
});

test("rag answers with citations", async () => {
  const res = await client.retrieval.rag({
    query: "How do lighthouse keepers exchange signals?",
    searchSettings: { filters: { topic: { $eq: "lighthouses" } } },
    ragGenerationConfig: { maxTokens: 200 },
  });
  const r = res.results;
  assert.ok(r.generatedAnswer.length > 0);
  assert.equal(r.completion, r.generatedAnswer);
  assert.ok(r.citations.length >= 1);
  const c = r.citations[0];
  assert.equal(c.object, "citation");
  assert.ok(r.generatedAnswer.includes(`[${c.id}]`));
  assert.ok(c.payload.id.startsWith(c.id));
  assert.equal(c.payload.documentId, state.rawDocId);
  assert.ok(r.searchResults.chunkSearchResults.length >= 1);
});

test("api keys: create, list, use, delete", async () => {
  const created = await client.users.createApiKey({ id: state.userId, name: `sdk-${RUN}`, description: "r2r-js check" });
  const key = created.results.apiKey;
  // R2R 3.6.6 keys are URL-safe base64 with padding in both parts: key_fzqk…cg==.b6B4…s74=
  assert.match(key, /^key_[A-Za-z0-9_=-]+\.[A-Za-z0-9_=-]+$/);
  assert.equal(created.results.publicKey, key.split(".")[0]);

  const list = await client.users.listApiKeys({ id: state.userId });
  const entry = list.results.find((k) => k.keyId === created.results.keyId);
  assert.ok(entry, "new key is listed");
  assert.equal(entry.name, `sdk-${RUN}`);

  process.env.R2R_API_KEY = key;
  try {
    const keyed = new r2rClient(BASE, false);
    assert.equal((await keyed.users.me()).results.id, state.userId);
  } finally {
    delete process.env.R2R_API_KEY;
  }

  const del = await client.users.deleteApiKey({ id: state.userId, keyId: created.results.keyId });
  assert.equal(del.results.success, true);
  process.env.R2R_API_KEY = key;
  try {
    await rejectsWithStatus(new r2rClient(BASE, false).users.me(), 401, /Invalid token or API key/);
  } finally {
    delete process.env.R2R_API_KEY;
  }
});

test("documents: delete", async () => {
  for (const id of [state.rawDocId, state.fileDocId]) {
    const res = await client.documents.delete({ id });
    assert.equal(res.results.success, true);
    await rejectsWithStatus(client.documents.retrieve({ id }), 404, /Document not found/);
  }
  await client.collections.delete({ id: state.collectionId });
});

test("logout invalidates the access token", async () => {
  const token = client.accessToken;
  const res = await client.users.logout();
  assert.equal(res.results.message, "Logged out successfully");
  const stale = new r2rClient(BASE, false);
  stale.setTokens(token, "");
  await rejectsWithStatus(stale.users.me(), 401, /Invalid token or API key/);
});
