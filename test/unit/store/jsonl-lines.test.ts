import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { readJsonl } from "../../../src/store/jsonl.ts";
import { confirmMessage, quickMessage } from "../../../src/store/jsonl-lines.ts";
import { tempDir } from "./helpers.ts";

const line = (fields: Record<string, unknown>) => JSON.stringify({ type: "message", id: "a1", parentId: null, timestamp: "2026-01-01T00:00:00.000Z", ...fields });
const usual = line({ message: { role: "user", content: "é ✓" } });

test("a message line in the usual layout is read from its first fields; the message starts at `at`", () => {
  const q = quickMessage(usual)!;
  expect(q).toMatchObject({ id: "a1", parentId: null, timestamp: "2026-01-01T00:00:00.000Z", role: "user" });
  expect(usual.slice(q.at, -1)).toBe(JSON.stringify({ role: "user", content: "é ✓" }));
  expect(quickMessage(line({ parentId: "p 1", message: { role: "assistant" } }))).toMatchObject({ parentId: "p 1", role: "assistant" });
  expect(confirmMessage(q, usual)).toEqual({ role: "user", content: "é ✓" });
});

test("any other line is not read without a parse", () => {
  const others = [
    JSON.stringify({ id: "a1", type: "message", parentId: null, timestamp: "t", message: { role: "user" } }), // another order
    JSON.stringify({ type: "message", id: 'a"1', parentId: null, timestamp: "t", message: { role: "user" } }), // an escape
    JSON.stringify({ type: "message", id: "a1", parentId: null, timestamp: "t\n", message: { role: "user" } }), // an escaped control character
    '{"type":"message","id":"a\t1","parentId":null,"timestamp":"t","message":{"role":"user"}}', // a raw one (not JSON)
    JSON.stringify({ type: "message", id: "a1", parentId: null, timestamp: "t", message: { content: "x", role: "user" } }), // role not first
    // Non-ASCII before the message: `at` would not count bytes (the store cuts the message from them).
    JSON.stringify({ type: "message", id: "a1", parentId: "p ä", timestamp: "t", message: { role: "user" } }),
    JSON.stringify({ type: "message", id: "ä€", parentId: null, timestamp: "t", message: { role: "user" } }),
    JSON.stringify({ type: "message", id: "a1", parentId: null, timestamp: "zeit ⌚", message: { role: "user" } }),
    JSON.stringify({ type: "model_change", id: "a1", parentId: null, timestamp: "t", provider: "p", modelId: "m" }),
    `${usual} `,
  ];
  for (const text of others) expect(quickMessage(text)).toBeUndefined();
});

test("the rest of the line must be one message with that role", () => {
  const after = `${usual.slice(0, -1)},"note":1}`;
  const twice = `${usual.slice(0, -1)},"timestamp":"2027-01-01T00:00:00.000Z"}`;
  const broken = `${usual.slice(0, -2)},}`;
  const otherRole = `${usual.slice(0, -2)},"role":"assistant"}}`; // the parse keeps the second role
  for (const text of [after, twice, broken, otherRole]) expect(confirmMessage(quickMessage(text)!, text)).toBeUndefined();
});

/** A v3 file of `n` ~1 KB messages; `odd` may replace a line. */
function file(dir: string, n: number, odd?: (i: number, text: string) => string): string {
  const rows = [JSON.stringify({ type: "session", version: 3, id: "s1", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/" })];
  for (let i = 0; i < n; i++) {
    const text = JSON.stringify({ type: "message", id: `m${i}`, parentId: i ? `m${i - 1}` : null, timestamp: "2026-01-01T00:00:00.000Z", message: { role: i % 2 ? "assistant" : "user", content: "x".repeat(1000) } });
    rows.push(odd ? odd(i, text) : text);
  }
  const path = join(dir, "s.jsonl");
  writeFileSync(path, `${rows.join("\n")}\n`);
  return path;
}

test("a large file's message rows are read without a parse and confirmed on another thread", () => {
  using dir = tempDir();
  const { rows, agreed } = readJsonl(file(dir.path, 3000)).importRows();
  const all = [...rows];
  expect(all.length).toBe(3000);
  // The first user message is parsed whole (the session's first message); the rest carry their role only.
  expect(all[0]!.entry).toMatchObject({ id: "m0", message: { role: "user", content: "x".repeat(1000) } });
  expect(all[1]!.entry).toEqual({ type: "message", id: "m1", parentId: "m0", timestamp: "2026-01-01T00:00:00.000Z", message: { role: "assistant" } } as never);
  expect(all[1]!.messageAt).toBe(all[1]!.body.indexOf('"message":') + 10);
  expect(agreed()).toBe(true);
});

test("a large file with a line that is not what its first fields say is not confirmed; entries() parses it", () => {
  using dir = tempDir();
  const path = file(dir.path, 3000, (i, text) => (i === 2000 ? `${text.slice(0, -1)},"note":1}` : text));
  const source = readJsonl(path);
  const { rows, agreed } = source.importRows();
  for (const _ of rows);
  expect(agreed()).toBe(false);
  const odd = [...source.entries()][2000]!;
  expect(odd.messageAt).toBeNull();
  expect((odd.entry as unknown as { note: number }).note).toBe(1);
});

test("a small file is parsed on this thread", () => {
  using dir = tempDir();
  const { rows, agreed } = readJsonl(file(dir.path, 10)).importRows();
  expect([...rows][1]!.entry).toMatchObject({ message: { content: "x".repeat(1000) } });
  expect(agreed()).toBe(true);
});
