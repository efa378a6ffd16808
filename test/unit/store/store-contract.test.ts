import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteStore } from "../../../src/store/sqlite-store.ts";
import type { Entry } from "../../../src/store/entries.ts";
import { type SessionStore, UnconfirmedRow } from "../../../src/store/store.ts";
import { PionError } from "../../../src/util/errors.ts";
import { assistant, bash, chain, header, ids, stored, user } from "./helpers.ts";
import { errorCode } from "../../support/error-code.ts";

// The one store pion has, on disk (WAL, as sessions are kept) and in memory (as --no-session keeps them).
const dir = mkdtempSync(join(tmpdir(), "pion-store-contract-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let dbs = 0;
const stores: [string, () => SessionStore][] = [
  ["sqlite on disk", () => openSqliteStore(join(dir, `${++dbs}.db`))],
  ["sqlite :memory:", () => openSqliteStore(":memory:")],
];

/** Pieces of a comma-separated list (strings or UTF-8 bytes) as one text. */
const listText = (pieces: Iterable<string | Uint8Array>): string => [...pieces].map((p) => (typeof p === "string" ? p : new TextDecoder().decode(p))).join(",");

const code = errorCode;

describe.each(stores)("%s store", (_name, open) => {
  test("append keeps order, moves the leaf, and answers entries by id", () => {
    const s = open();
    s.createSession(header("s1"), "/tmp/s1.jsonl");
    s.append("s1", user("a", null, "hi"));
    s.append("s1", assistant("b", "a", "hello"));
    s.append("s1", user("c", "a", "branch"));
    expect(s.entries("s1").map((e) => [e.id, e.parentId])).toEqual([["a", null], ["b", "a"], ["c", "a"]]);
    expect(s.getSession("s1")?.leafId).toBe("c");
    expect(s.getEntry("s1", "b")).toEqual(assistant("b", "a", "hello", s.getEntry("s1", "b")!.timestamp));
    expect(s.getEntry("s1", "zz")).toBeUndefined();
    expect(s.entryCount("s1")).toBe(3);
    s.setLeaf("s1", "b");
    expect(s.getSession("s1")?.leafId).toBe("b");
    expect(code(() => s.setLeaf("s1", "nope"))).toBe("unknown_entry");
    expect(s.findSessionByFile("/tmp/s1.jsonl")?.header.id).toBe("s1");
    expect(s.findSessionByFile("/tmp/other.jsonl")).toBeUndefined();
    s.close();
  });

  test("errors are typed: unknown session, duplicate entry, existing session", () => {
    const s = open();
    s.createSession(header("s1"));
    s.append("s1", user("a", null, "hi"));
    expect(code(() => s.append("nope", user("x", null, "x")))).toBe("unknown_session");
    expect(code(() => s.append("s1", user("a", null, "again")))).toBe("duplicate_entry");
    expect(code(() => s.createSession(header("s1")))).toBe("session_exists");
    expect(code(() => s.entries("nope"))).toBe("unknown_session");
    // A failed batch leaves nothing behind.
    expect(code(() => s.appendMany("s1", [user("b", "a", "b"), user("a", "b", "dup")]))).toBe("duplicate_entry");
    expect(ids(s.entries("s1"))).toEqual(["a"]);
    s.close();
  });

  test("importSession writes session, entries and summary at once; a failure leaves nothing", () => {
    const s = open();
    let pulled = 0;
    function* lazily() {
      for (const e of chain(2500)) {
        pulled++;
        yield stored(e);
      }
    }
    s.importSession(header("s1"), "/tmp/imported.jsonl", lazily(), () => ({ leafId: "never-read", messageCount: pulled }));
    expect(s.entryCount("s1")).toBe(2500);
    const meta = s.getSession("s1")!;
    expect(meta.leafId).toBe(s.entries("s1").at(-1)!.id);
    // The summary was asked for after every entry was consumed.
    expect(meta.cache?.messageCount).toBe(2500);
    expect(s.findSessionByFile("/tmp/imported.jsonl")?.header.id).toBe("s1");

    function* failing() {
      yield* chain(1500).map(stored);
      throw new Error("line 1502: not a JSON line");
    }
    expect(() => s.importSession(header("s2"), "/tmp/broken.jsonl", failing(), () => ({ leafId: null, messageCount: 0 }))).toThrow("line 1502");
    expect(s.getSession("s2")).toBeUndefined();
    expect(s.findSessionByFile("/tmp/broken.jsonl")).toBeUndefined();
    // A duplicate id inside the import fails it as a whole too.
    const dup = [user("a", null, "x"), user("a", null, "y")].map(stored);
    expect(code(() => s.importSession(header("s3"), undefined, dup, () => ({ leafId: "a", messageCount: 2 })))).toBe("duplicate_entry");
    expect(s.getSession("s3")).toBeUndefined();
    s.close();
  });


  test("an unconfirmed row is written as its bytes if its message is one JSON value; else the import is refused", () => {
    const s = open();
    // A row as the file reader gives it: the line's bytes in a window it reuses for the next row.
    const window = Buffer.alloc(4096);
    const line = (e: Entry): string => JSON.stringify(e);
    function* rows(texts: string[]) {
      for (const [i, text] of texts.entries()) {
        const n = window.write(text, 0);
        const entry = { ...(JSON.parse(texts[i]!.slice(0, texts[i]!.indexOf(',"message":')) + "}") as object), message: { role: "user" } } as unknown as Entry;
        yield { entry, body: window.subarray(0, n), messageAt: text.indexOf(',"message":') + 11, unconfirmed: true as const };
        window.fill(0x20); // what the next row would leave there
      }
    }
    const good = [user("a", null, "é ✓"), user("b", "a", "two")].map(line);
    s.importSession(header("s1"), undefined, rows(good), () => ({ leafId: "b", messageCount: 2 }));
    expect(s.entries("s1")).toEqual(good.map((t) => JSON.parse(t)));
    expect(listText(s.contextMessages("s1"))).toBe(good.map((t) => JSON.stringify(JSON.parse(t).message)).join(","));
    for (const odd of [`${good[1]!.slice(0, -1)},"note":1}`, `${good[1]!.slice(0, -2)},}`, `${good[1]!.slice(0, -2)}}`]) {
      expect(() => s.importSession(header("s2"), undefined, rows([good[0]!, odd]), () => ({ leafId: "b", messageCount: 2 }))).toThrow(UnconfirmedRow);
      expect(s.getSession("s2")).toBeUndefined();
    }
    s.close();
  });

  test("entriesSince pages strictly after the cursor and rejects unknown ids", () => {
    const s = open();
    s.createSession(header("s1"));
    const all = chain(10);
    s.appendMany("s1", all);
    expect(s.getSession("s1")?.leafId).toBe(all[9]!.id);
    expect(s.entriesSince("s1", all[2]!.id)).toEqual({ entries: all.slice(3), hasMore: false });
    expect(s.entriesSince("s1", all[2]!.id, 4)).toEqual({ entries: all.slice(3, 7), hasMore: true });
    expect(s.entriesSince("s1", all[5]!.id, 4)).toEqual({ entries: all.slice(6, 10), hasMore: false });
    expect(s.entriesSince("s1", all[9]!.id)).toEqual({ entries: [], hasMore: false });
    expect(s.entriesPage("s1", 3)).toEqual({ entries: all.slice(0, 3), hasMore: true });
    expect(s.entriesPage("s1", 10)).toEqual({ entries: all, hasMore: false });
    expect(code(() => s.entriesSince("s1", "deadbeef"))).toBe("unknown_entry");
    s.close();
  });

  test("listSessions: newest first, filtered by cwd, paged by cursor, with summary fields", () => {
    const s = open();
    for (let i = 0; i < 7; i++) {
      const id = `s${i}`;
      s.createSession(header(id, i % 2 === 0 ? "/a" : "/b", i === 3 ? "/x/parent.jsonl" : undefined), `/tmp/${id}.jsonl`);
      s.append(id, user(`${id}u`, null, `first of ${id}`));
      s.append(id, assistant(`${id}a`, `${id}u`, "reply"));
    }
    s.append("s2", { type: "session_info", id: "s2n", parentId: "s2a", timestamp: new Date(Date.now() + 1e12).toISOString(), name: " Named " });

    const page1 = s.listSessions({ limit: 3 });
    expect(page1.sessions.map((x) => x.sessionId)).toEqual(["s2", "s6", "s5"]);
    expect(page1.nextCursor).toBeString();
    const page2 = s.listSessions({ limit: 3, cursor: page1.nextCursor });
    expect(page2.sessions.map((x) => x.sessionId)).toEqual(["s4", "s3", "s1"]);
    const page3 = s.listSessions({ limit: 3, cursor: page2.nextCursor });
    expect(page3).toEqual({ sessions: [expect.objectContaining({ sessionId: "s0" })] });
    expect(s.listSessions({ cwd: "/b" }).sessions.map((x) => x.sessionId)).toEqual(["s5", "s3", "s1"]);

    const s3 = page2.sessions[1]!;
    expect(s3).toEqual({
      sessionId: "s3",
      file: "/tmp/s3.jsonl",
      cwd: "/b",
      name: undefined,
      firstMessage: "first of s3",
      messageCount: 2,
      createdAt: s.getSession("s3")!.header.timestamp,
      updatedAt: s.getEntry("s3", "s3a")!.timestamp,
      parentSession: "/x/parent.jsonl",
    });
    expect(page1.sessions[0]!.name).toBe("Named");
    expect(s.getSession("s2")?.name).toBe("Named");
    expect(code(() => s.listSessions({ cursor: "garbage!" }))).toBe("invalid_cursor");
    s.close();
  });

  test("searchSessions finds user, assistant and bash text", () => {
    const s = open();
    s.createSession(header("s1", "/a"), "/tmp/s1.jsonl");
    s.createSession(header("s2", "/b"));
    s.append("s1", user("u1", null, "please refactor the tokenizer module"));
    s.append("s1", assistant("a1", "u1", "The tokenizer now streams."));
    s.append("s2", bash("b1", null, "grep -rn tokenizer src", "src/lex.ts:1: tokenizer"));
    s.append("s2", user("u2", "b1", "unrelated"));

    const hits = s.searchSessions({ query: "tokenizer" });
    expect(hits.map((h) => `${h.sessionId}/${h.entryId}/${h.role}`).sort()).toEqual(["s1/a1/assistant", "s1/u1/user", "s2/b1/bashExecution"]);
    const u1 = hits.find((h) => h.entryId === "u1")!;
    expect(u1).toEqual({ sessionId: "s1", sessionFile: "/tmp/s1.jsonl", entryId: "u1", role: "user", snippet: expect.stringContaining("tokenizer"), timestamp: s.getEntry("s1", "u1")!.timestamp });
    expect(s.searchSessions({ query: "tokenizer", cwd: "/b" }).map((h) => h.entryId)).toEqual(["b1"]);
    expect(s.searchSessions({ query: "tokenizer", limit: 1 })).toHaveLength(1);
    expect(s.searchSessions({ query: "   " })).toEqual([]);
    // Entries written after a search (appended or imported) are found by the next one.
    s.append("s2", user("u3", "u2", "the tokenizer again"));
    s.importSession(header("s3"), undefined, [stored(user("i1", null, "imported tokenizer notes"))], () => ({ leafId: "i1", messageCount: 1 }));
    expect(s.searchSessions({ query: "tokenizer" }).map((h) => h.entryId).sort()).toEqual(["a1", "b1", "i1", "u1", "u3"]);
    s.close();
  });

  test("the index, bodies and readers answer without parsing entries, in append order", () => {
    const s = open();
    s.createSession(header("s1"));
    const entries = chain(1200);
    s.appendMany("s1", entries);
    // A foreign layout (message not last) and a non-message kind, through an import.
    const moved = { message: { role: "user", content: "moved", timestamp: 1 }, type: "message", id: "m1", parentId: null, timestamp: "2026-03-01T00:00:00.000Z" };
    const label = { type: "label", id: "l1", parentId: "m1", timestamp: "2026-03-01T00:00:01.000Z", targetId: "m1", label: "here" };
    s.importSession(header("s2"), undefined, [moved, label].map((e) => ({ entry: e as unknown as Entry, body: JSON.stringify(e) })), () => ({ leafId: "l1", messageCount: 1 }));

    const chain1 = [...s.chainPages("s1")];
    expect(chain1.length).toBeGreaterThan(1);
    expect(new TextDecoder().decode(Buffer.concat(chain1.map((p) => p.openings)))).toBe(entries.map((e) => `{"entry":${JSON.stringify(e)},"children":[`).join(""));
    expect(chain1.flatMap((p) => p.ids)).toEqual(entries.map((e) => e.id));
    expect(chain1.flatMap((p) => p.labels)).toEqual([]);
    expect([...s.chainPages("s2")].flatMap((p) => p.labels)).toEqual([JSON.stringify(label)]);
    // Pages of the comma-separated lists (1,200 rows: several pages), the other session's rows in none of them.
    const pages = [...s.bodyPages("s1")];
    expect(pages.length).toBeGreaterThan(1);
    expect(listText(pages)).toBe(entries.map((e) => JSON.stringify(e)).join(","));
    expect(listText(s.bodyPages("s2"))).toBe([moved, label].map((e) => JSON.stringify(e)).join(","));
    const context = [...s.contextMessages("s1")];
    expect(context.length).toBeGreaterThan(1);
    expect(JSON.parse(`[${listText(context)}]`)).toEqual(entries.map((e) => (e as { message: unknown }).message));
    expect(listText(s.contextMessages("s2"))).toBe(JSON.stringify(moved.message));
    // The message is cut from its body where the bytes before its offset are its key: not when an id
    // or time before it holds non-ASCII text (the offset counts UTF-16 units), nor for another layout.
    const foreign = [
      { type: "message", id: "ä€1", parentId: null, timestamp: "2026-03-01T00:00:00.000Z", message: { role: "user", content: "after ä", timestamp: 1 } },
      { type: "message", id: "m2", parentId: "ä€1", timestamp: "2026-03-01T00:00:01.000Z", message: { role: "assistant", content: [{ type: "text", text: "ünï €" }], timestamp: 2 } },
      { type: "message", id: "m3", parentId: "m2", timestamp: "zeit ⌚", message: { role: "user", content: "x", timestamp: 3 } },
    ];
    s.importSession(header("s4"), undefined, foreign.map((e) => ({ entry: e as unknown as Entry, body: JSON.stringify(e) })), () => ({ leafId: "m3", messageCount: 3 }));
    expect(JSON.parse(`[${listText(s.contextMessages("s4"))}]`)).toEqual(foreign.map((e) => e.message));
    const index = s.entryIndex("s1");
    expect(index.map((r) => [r.id, r.parentId, r.type, r.timestamp, r.role, r.body])).toEqual(
      entries.map((e) => [e.id, e.parentId, "message", e.timestamp, e.type === "message" ? e.message.role : null, null]),
    );
    const body = s.bodyReader("s1");
    const message = s.messageReader("s1");
    // Out of order too: a window is read from each row not at hand.
    for (const i of [0, 1, 700, 3, 1199, 512]) {
      expect(body(index[i]!.ref)).toBe(JSON.stringify(entries[i]));
      expect(JSON.parse(message(index[i]!.ref))).toEqual((entries[i] as { message: unknown }).message);
    }
    const other = s.entryIndex("s2");
    expect(other.map((r) => [r.id, r.role, r.body])).toEqual([["m1", "user", null], ["l1", null, JSON.stringify(label)]]);
    expect(s.messageReader("s2")(other[0]!.ref)).toBe(JSON.stringify(moved.message));
    expect(() => s.messageReader("s2")(other[1]!.ref)).toThrow(PionError);
    expect(() => body(other[0]!.ref)).toThrow(PionError); // a row of another session
    s.close();
  });
});
