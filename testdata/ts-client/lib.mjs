// Helpers shared by the TypeScript SDK end-to-end scripts (e2e.mjs, real.mjs).

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
