import { expect, test } from "bun:test";
import { closeSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readJsonl } from "../../../src/store/jsonl.ts";
import { confirmMessage, fileLineBytes, lineText, quickMessage as quickBytes } from "../../../src/store/jsonl-lines.ts";
import type { Entry } from "../../../src/store/entries.ts";
import { tempDir } from "./helpers.ts";

/** quickMessage of a line given as text. */
const quickMessage = (text: string) => quickBytes(Buffer.from(text), 0, Buffer.byteLength(text));
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

const textOf = (body: string | Uint8Array): string => (typeof body === "string" ? body : Buffer.from(body).toString());
const linesOf = (path: string): string[] => readFileSync(path, "utf8").split("\n").filter((l) => l !== "");

/** fileLineBytes of a file holding `bytes`, each line as [number, text]. */
function lineBytes(dir: string, bytes: Buffer): [number, string][] {
  const path = join(dir, "lines.jsonl");
  writeFileSync(path, bytes);
  const fd = openSync(path, "r");
  try {
    const lines: [number, string][] = [];
    for (const l of fileLineBytes(fd, bytes.length)) lines.push([l.line, lineText(l)]); // the cursor is reused
    return lines;
  } finally {
    closeSync(fd);
  }
}

test("a file's lines are cut from its bytes: numbered, without their breaks, blank ones left out, across windows", () => {
  using dir = tempDir();
  const long = "y".repeat(3 << 20); // longer than the window, twice over
  const text = `\ufeff{"a":1}\r\n\n  \t\n\u00a0\n{"é":"✓"}\n${long}\n${"z".repeat((1 << 20) - 5)}\n{"b":2}`;
  const got = lineBytes(dir.path, Buffer.from(text));
  expect(got).toEqual([
    [1, '{"a":1}'],
    [5, '{"é":"✓"}'],
    [6, long],
    [7, "z".repeat((1 << 20) - 5)],
    [8, '{"b":2}'],
  ]);
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

/** importRows of `path`, each row's body copied as it comes (its bytes are good until the next row is taken). */
function importRows(path: string): { entry: Entry; body: string; bytes: boolean; messageAt?: number | null; unconfirmed?: true }[] {
  const rows = [];
  for (const r of readJsonl(path).importRows().rows) rows.push({ ...r, body: textOf(r.body), bytes: typeof r.body !== "string" });
  return rows;
}

test("message rows are read from their bytes without a parse, for the store to confirm", () => {
  using dir = tempDir();
  const path = file(dir.path, 3000);
  const all = importRows(path);
  expect(all.length).toBe(3000);
  expect(all.map((r) => r.body)).toEqual(linesOf(path).slice(1));
  // The first user message is parsed whole (the session's first message); the rest carry their role only.
  expect(all[0]).toMatchObject({ bytes: false, entry: { id: "m0", message: { role: "user", content: "x".repeat(1000) } } });
  expect(all[0]!.unconfirmed).toBeUndefined();
  expect(all[1]!.entry).toEqual({ type: "message", id: "m1", parentId: "m0", timestamp: "2026-01-01T00:00:00.000Z", message: { role: "assistant" } } as never);
  expect(all[1]).toMatchObject({ bytes: true, unconfirmed: true, messageAt: all[1]!.body.indexOf('"message":') + 10 });
  expect(all.slice(1).every((r) => r.bytes && r.unconfirmed)).toBe(true);
});

test("a message line that is not UTF-8 is parsed: its text, the bad byte replaced", () => {
  using dir = tempDir();
  const path = file(dir.path, 30);
  const bytes = readFileSync(path);
  const at = bytes.indexOf("x".repeat(1000), bytes.indexOf('"id":"m25"'));
  bytes[at] = 0xff; // a byte no UTF-8 text holds
  writeFileSync(path, bytes);
  const row = importRows(path)[25]!;
  expect(row).toMatchObject({ bytes: false, messageAt: row.body.indexOf('"message":') + 10 });
  expect(row.unconfirmed).toBeUndefined();
  expect(row.body).toContain("\ufffdxxx");
});

test("a message that may name its role again is parsed: the row has the role the parse keeps", () => {
  using dir = tempDir();
  const odd: Record<number, (text: string) => string> = {
    3: (t) => `${t.slice(0, -2)},"role":"custom"}}`,
    5: (t) => `${t.slice(0, -2)},"r\\u006fle":"custom"}}`,
    7: (t) => `${t.slice(0, -2)},"tool":{"role":"x"}}}`, // a nested key: parsed too, the role stays
    9: (t) => `${t.slice(0, -2)},"ansi":"\\u001b[0m"}}`, // an escape JSON.stringify writes: read without a parse
  };
  const path = file(dir.path, 12, (i, text) => odd[i]?.(text) ?? text);
  const rows = importRows(path);
  const role = (i: number) => (rows[i]!.entry as { message?: { role: string } }).message?.role;
  expect([role(3), role(5), role(7)]).toEqual(["custom", "custom", "assistant"]);
  for (const i of [3, 5, 7]) expect(rows[i]!.unconfirmed).toBeUndefined();
  expect(rows[9]).toMatchObject({ bytes: true, unconfirmed: true });
});

test("in a file of 32 MB or more, the message rows are confirmed on another thread", () => {
  using dir = tempDir();
  const lines = 33_000; // about 34 MB
  const good = readJsonl(file(dir.path, lines)).importRows();
  let n = 0;
  for (const r of good.rows) if (r.unconfirmed === undefined && typeof r.body !== "string") n++;
  expect(n).toBe(lines - 1); // all but the first user message, read from their bytes and left to the thread
  expect(good.agreed()).toBe(true);
  // A field after the message: the line's message is not one JSON value.
  const odd = readJsonl(file(dir.path, lines, (i, text) => (i === 30_000 ? `${text.slice(0, -1)},"note":1}` : text))).importRows();
  for (const _ of odd.rows);
  expect(odd.agreed()).toBe(false);
});

test("a v2 file: its hookMessage lines are parsed and migrated, its other message lines read from their bytes", () => {
  using dir = tempDir();
  const path = join(dir.path, "v2.jsonl");
  const head = JSON.stringify({ type: "session", version: 2, id: "s2", timestamp: "t", cwd: "/" });
  const hook = '{"type":"message","id":"h1","parentId":null,"timestamp":"t","message":{"role":"hookMessage","customType":"x","content":"hi"}}';
  const user = '{"type":"message","id":"u1","parentId":"h1","timestamp":"t","message":{"role":"user","content":"q"}}';
  const reply = '{"type":"message","id":"a1","parentId":"u1","timestamp":"t","message":{"role":"assistant","content":[]}}';
  writeFileSync(path, [head, hook, user, reply].join("\n"));
  const rows = importRows(path);
  expect(rows.map((r) => [r.bytes, r.unconfirmed ?? false])).toEqual([
    [false, false],
    [false, false],
    [true, true],
  ]);
  expect(JSON.parse(rows[0]!.body).message.role).toBe("custom");
  expect(rows.map((r) => r.body).slice(1)).toEqual([user, reply]);
});

test("a v1 file is parsed whole", () => {
  using dir = tempDir();
  const path = join(dir.path, "v1.jsonl");
  writeFileSync(path, `${JSON.stringify({ type: "session", id: "s1", timestamp: "t", cwd: "/" })}\n${JSON.stringify({ type: "message", timestamp: "t", message: { role: "user", content: "hi" } })}\n`);
  const rows = importRows(path);
  expect(rows).toHaveLength(1);
  expect(rows[0]).toMatchObject({ bytes: false, entry: { type: "message", parentId: null, message: { role: "user", content: "hi" } } });
});
