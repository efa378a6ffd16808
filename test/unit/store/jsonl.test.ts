import { describe, expect, test } from "bun:test";
import { appendFileSync, copyFileSync, readFileSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Entry } from "../../../src/store/entries.ts";
import { syncJsonl, withJsonlExport } from "../../../src/store/jsonl-export.ts";
import { openSqliteStore } from "../../../src/store/sqlite-store.ts";
import type { SessionStore } from "../../../src/store/store.ts";
import { assistant, chain, header, ids, importJsonl, parseJsonl, tempDir, user } from "./helpers.ts";

const fixtures = join(import.meta.dir, "..", "..", "fixtures");
const lines = (path: string): string[] => readFileSync(path, "utf8").split("\n").filter((l) => l !== "");
const expectedFile = (store: SessionStore, id: string): string =>
  [store.getSession(id)!.header, ...store.entries(id)].map((x) => `${JSON.stringify(x)}\n`).join("");

function expectChained(entries: readonly Entry[]): void {
  expect(entries.length).toBeGreaterThan(0);
  const seen = new Set<string>();
  for (const e of entries) {
    expect(e.id).toMatch(/^[0-9a-f]{8}$/);
    expect(e.parentId === null || seen.has(e.parentId)).toBe(true);
    seen.add(e.id);
  }
}

describe("JSONL export", () => {
  test.concurrent("every committed entry is appended; the file equals header + stored entries", () => {
    using dir = tempDir();
    const file = join(dir.path, "--home-user-project--", "s1.jsonl");
    const store = withJsonlExport(openSqliteStore(join(dir.path, "pion.db")));
    store.createSession(header("s1"), file);
    expect(lines(file)).toEqual([JSON.stringify(store.getSession("s1")!.header)]);
    store.append("s1", user("a", null, "hi"));
    store.append("s1", assistant("b", "a", "hello"));
    store.appendMany("s1", chain(5, "c"));
    expect(readFileSync(file, "utf8")).toBe(expectedFile(store, "s1"));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir.path, "--home-user-project--")).mode & 0o777).toBe(0o700);
    store.close();
  });

  test.concurrent("a file behind the database, with a torn last line, is completed on sync", () => {
    using dir = tempDir();
    const file = join(dir.path, "s1.jsonl");
    const store = withJsonlExport(openSqliteStore(join(dir.path, "pion.db")));
    store.createSession(header("s1"), file);
    store.appendMany("s1", chain(20));
    const full = readFileSync(file, "utf8");
    store.close();

    // A crash after the commit of entries 12..19 and in the middle of writing entry 12's line.
    const keep = full.split("\n").slice(0, 12).join("\n").length + 1;
    truncateSync(file, keep + 25);
    const reopened = openSqliteStore(join(dir.path, "pion.db"));
    expect(syncJsonl(reopened, "s1")).toEqual({ path: file, appended: 9, truncatedBytes: 25 });
    expect(readFileSync(file, "utf8")).toBe(full);
    expect(syncJsonl(reopened, "s1")).toEqual({ path: file, appended: 0, truncatedBytes: 0 });

    // The export store does the same on its first append after a crash.
    truncateSync(file, keep - 1); // the newline of the last complete line is lost too
    const exporting = withJsonlExport(reopened);
    exporting.append("s1", user("z", chain(20)[19]!.id, "after the crash"));
    expect(readFileSync(file, "utf8")).toBe(expectedFile(exporting, "s1"));
    exporting.close();
  });

  test.concurrent("a missing file is rewritten whole; a file of another session is an error", () => {
    using dir = tempDir();
    const store = openSqliteStore(":memory:");
    const file = join(dir.path, "s1.jsonl");
    store.createSession(header("s1"), file);
    store.appendMany("s1", chain(3));
    expect(syncJsonl(store, "s1")).toEqual({ path: file, appended: 3, truncatedBytes: 0 });
    expect(readFileSync(file, "utf8")).toBe(expectedFile(store, "s1"));

    store.createSession(header("s2"), join(dir.path, "s2.jsonl"));
    copyFileSync(file, join(dir.path, "s2.jsonl"));
    expect(() => syncJsonl(store, "s2")).toThrow(/does not match the database/);
    store.append("s2", user("other", null, "x"));
    writeFileSync(join(dir.path, "s2.jsonl"), `${JSON.stringify(store.getSession("s2")!.header)}\n${JSON.stringify(user("nothere", null, "x"))}\n`);
    expect(() => syncJsonl(store, "s2")).toThrow(/nothere is not in the database/);

    store.close();
  });
});

describe("JSONL import", () => {
  test.concurrent("reference v1 file: migrated to a chained tree with fresh ids", () => {
    const s = importJsonl(join(fixtures, "reference-v1-linear.jsonl"));
    expect(s.version).toBe(1);
    expect(s.tornTail).toBe(false);
    expect(s.header).toEqual({ type: "session", version: 3, id: "d703a1a9-1b7b-4fb1-b512-c9738b1fe617", timestamp: "2025-11-20T23:33:50.805Z", cwd: "/Users/badlogic/workspaces/pi-mono" });
    expect(s.entries).toHaveLength(1018);
    expectChained(s.entries);
    expect(s.entries.every((e, i) => e.parentId === (i === 0 ? null : s.entries[i - 1]!.id))).toBe(true);
    expect(new Set(ids(s.entries)).size).toBe(1018);
    expect(s.leafId).toBe(s.entries[1017]!.id);
    expect(Object.keys(s.entries[0]!).slice(0, 4)).toEqual(["type", "id", "parentId", "timestamp"]);
  });

  test.concurrent.each([
    ["reference-v3-fork-parent.jsonl", 7, undefined],
    ["reference-v3-fork-child.jsonl", 7, "/home/user/.pion/sessions/2026-11-29T13-58-47-245Z_01a22799-e6cd-721d-ba91-540ce614e7fe.jsonl"],
    ["reference-v3-compaction.jsonl", 10, undefined],
  ])("reference %s: %i entries, kept byte-for-byte", (name, count, parentSession) => {
    const path = join(fixtures, name);
    const s = importJsonl(path);
    expect(s.version).toBe(3);
    expect(s.entries).toHaveLength(count);
    expectChained(s.entries);
    expect(s.header.parentSession).toBe(parentSession);
    expect(s.leafId).toBe(s.entries[count - 1]!.id);
    // Unknown roles (system) and fields (usage on compaction, systemMessage) survive untouched.
    expect(s.entries.map((e) => JSON.stringify(e))).toEqual(lines(path).slice(1));
    expect(s.bodies).toEqual(lines(path).slice(1));
  });

  test.concurrent("an imported v3 file is continued in place; a v1 file gets a new v3 export", () => {
    using dir = tempDir();
    const store = withJsonlExport(openSqliteStore(join(dir.path, "pion.db")));
    const v3 = join(dir.path, "compaction.jsonl");
    copyFileSync(join(fixtures, "reference-v3-compaction.jsonl"), v3);
    appendFileSync(v3, '{"type":"message","id":"torn'); // a crash mid-line in the reference
    const imported = importJsonl(v3);
    expect(imported.tornTail).toBe(true);
    store.createSession(imported.header, v3);
    store.appendMany(imported.header.id, imported.entries);
    store.append(imported.header.id, user("abcdef01", imported.leafId, "continued"));
    const original = lines(join(fixtures, "reference-v3-compaction.jsonl"));
    expect(lines(v3)).toEqual([...original, JSON.stringify(store.getEntry(imported.header.id, "abcdef01"))]);
    expect(store.findSessionByFile(v3)?.header.id).toBe(imported.header.id);

    const v1 = importJsonl(join(fixtures, "reference-v1-linear.jsonl"));
    const out = join(dir.path, "v1-as-v3.jsonl");
    store.createSession(v1.header, out);
    store.appendMany(v1.header.id, v1.entries);
    const reread = importJsonl(out);
    expect(reread.version).toBe(3);
    expect(reread.entries).toEqual(v1.entries);
    expect(store.searchSessions({ query: "user-message-selector" }).length).toBeGreaterThan(0);
    store.close();
  });

  test.concurrent("v2 hookMessage becomes custom; v1 compaction index becomes an id; unknown kinds are kept", () => {
    const v2 = parseJsonl(
      [
        '{"type":"session","version":2,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}',
        '{"type":"message","id":"a1","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"hookMessage","customType":"x","content":"hi","display":true,"timestamp":1}}',
        '{"type":"context_edit","id":"a2","parentId":"a1","timestamp":"2025-01-01T00:00:02.000Z","targetId":"a1","replacement":null}',
        '{"type":"usage","id":"a3","parentId":"a2","timestamp":"2025-01-01T00:00:03.000Z","kind":"cache_warm","usage":{"input":0}}',
        "",
      ].join("\r\n"),
    );
    expect(v2.entries.map((e): string => (e.type === "message" ? e.message.role : e.type))).toEqual(["custom", "context_edit", "usage"]);
    expect(v2.entries[2]).toEqual({ type: "usage", id: "a3", parentId: "a2", timestamp: "2025-01-01T00:00:03.000Z", kind: "cache_warm", usage: { input: 0 } } as unknown as Entry);

    const v1 = parseJsonl(
      [
        '{"type":"session","id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}',
        '{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"a","timestamp":1}}',
        '{"type":"message","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"user","content":"b","timestamp":2}}',
        '{"type":"compaction","timestamp":"2025-01-01T00:00:03.000Z","summary":"s","firstKeptEntryIndex":2,"tokensBefore":5}',
      ].join("\n"),
    );
    const compaction = v1.entries[2]!;
    expect(compaction).toEqual({ type: "compaction", id: compaction.id, parentId: v1.entries[1]!.id, timestamp: "2025-01-01T00:00:03.000Z", summary: "s", firstKeptEntryId: v1.entries[1]!.id, tokensBefore: 5 });
  });

  test.concurrent("lines that cross the 1 MB read windows, a BOM, CRLF, blank lines and multi-byte text read the same", () => {
    const head = '{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}';
    const lines = [head];
    // Lines of 1,000 to 300,000 characters, "é" and "€" among them: window edges fall inside lines,
    // inside multi-byte characters and right after line breaks.
    for (let i = 0; i < 40; i++) {
      const text = `${"é€x".repeat((i * 7919) % 100_000)}${i}`;
      lines.push(JSON.stringify({ type: "message", id: `e${i}`, parentId: i === 0 ? null : `e${i - 1}`, timestamp: "2025-01-01T00:00:01.000Z", message: { role: "user", content: text, timestamp: i } }));
      if (i % 9 === 0) lines.push("");
    }
    const parsed = parseJsonl(`\ufeff${lines.join("\r\n")}\r\n`);
    expect(parsed.entries.length).toBe(40);
    expect(parsed.entries.map((e) => (e as { message: { content: string } }).message.content)).toEqual(
      lines.filter((l) => l !== "" && l !== head).map((l) => JSON.parse(l).message.content),
    );
    // An error after several windows still names its line (blank lines counted).
    const bad = [...lines.slice(0, 30), "{not json", ...lines.slice(30)].join("\n");
    expect(() => parseJsonl(bad, "big.jsonl")).toThrow("big.jsonl:31: not a JSON line");
  });

  test.concurrent("bad files are errors naming the line", () => {
    expect(() => parseJsonl('{"type":"message"}\n', "x.jsonl")).toThrow(/x.jsonl is not a session file/);
    expect(() => parseJsonl('{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/"}\nnot json\n{}\n', "x.jsonl")).toThrow("x.jsonl:2: not a JSON line");
    expect(() => parseJsonl('{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/"}\n{"type":"message","parentId":null,"timestamp":"t"}\n', "x.jsonl")).toThrow(/x.jsonl:2: not a session entry/);
    expect(() => parseJsonl('{"type":"session","version":4,"id":"s","timestamp":"t","cwd":"/"}\n', "x.jsonl")).toThrow(/v4/);
    expect(() => importJsonl("/nonexistent/file.jsonl")).toThrow("Session file not found: /nonexistent/file.jsonl");
  });
});
