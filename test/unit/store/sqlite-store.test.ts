import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { SCHEMA_VERSION } from "../../../src/store/sqlite-schema.ts";
import { openSqliteStore } from "../../../src/store/sqlite-store.ts";
import { PionError } from "../../../src/util/errors.ts";
import { assistant, chain, header, ids, stored, tempDir, user } from "./helpers.ts";

const mode = (path: string): number => statSync(path).mode & 0o777;

describe("sqlite store on disk", () => {
  test.concurrent("entries, leaf and name survive a reopen; files are 0600, folders 0700", () => {
    using dir = tempDir();
    const dbPath = join(dir.path, "nested", "sessions", "pion.db");
    const a = openSqliteStore(dbPath);
    a.createSession(header("s1"), join(dir.path, "s1.jsonl"));
    a.append("s1", user("a", null, "hi"));
    a.append("s1", assistant("b", "a", "hello"));
    a.append("s1", { type: "session_info", id: "c", parentId: "b", timestamp: new Date().toISOString(), name: "work" });
    a.setLeaf("s1", "a");
    expect(mode(dbPath)).toBe(0o600);
    expect(mode(`${dbPath}-wal`)).toBe(0o600);
    expect(mode(`${dbPath}-shm`)).toBe(0o600);
    expect(mode(join(dir.path, "nested"))).toBe(0o700);
    expect(mode(join(dir.path, "nested", "sessions"))).toBe(0o700);
    a.close();

    const b = openSqliteStore(dbPath);
    expect(ids(b.entries("s1"))).toEqual(["a", "b", "c"]);
    expect(b.getSession("s1")).toEqual({ header: expect.objectContaining({ id: "s1" }), file: join(dir.path, "s1.jsonl"), name: "work", leafId: "a" });
    b.close();
  });

  const batch = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => stored(user(`${prefix}${i}`, i === 0 ? null : `${prefix}${i - 1}`, "x".repeat(1000))));

  test("a small import is left to SQLite's own checkpoint: no thread copies it, and the close leaves it", async () => {
    using dir = tempDir();
    const dbPath = join(dir.path, "pion.db");
    const store = openSqliteStore(dbPath);
    const before = statSync(dbPath).size;
    store.importSession(header("small"), undefined, batch("s", 500), () => ({ leafId: "s499", messageCount: 500 }));
    await Bun.sleep(300);
    expect(statSync(dbPath).size).toBe(before);
    expect(statSync(`${dbPath}-wal`).size).toBeGreaterThan(500_000);
    store.close();
    expect(statSync(dbPath).size).toBe(before); // left for the next opener, as a crash would leave it
    expect(ids(openSqliteStore(dbPath).entries("small")).length).toBe(500);
  });

  test("a large WAL is checkpointed when the store closes", () => {
    using dir = tempDir();
    const dbPath = join(dir.path, "pion.db");
    const store = openSqliteStore(dbPath);
    store.createSession(header("big"));
    for (const e of batch("a", 3000)) store.append("big", e.entry);
    expect(statSync(`${dbPath}-wal`).size).toBeGreaterThan(4 << 20);
    store.close();
    expect(existsSync(`${dbPath}-wal`)).toBe(false);
    expect(statSync(dbPath).size).toBeGreaterThan(3_000_000);
    expect(ids(openSqliteStore(dbPath).entries("big")).length).toBe(3000);
  });

  test("an import's checkpoint runs on a thread of its own: the database file fills while the process goes on", async () => {
    using dir = tempDir();
    const dbPath = join(dir.path, "pion.db");
    const store = openSqliteStore(dbPath);
    const text = "x".repeat(1000);
    const entries = Array.from({ length: 20_000 }, (_, i) => stored(user(`e${i}`, i === 0 ? null : `e${i - 1}`, text)));
    store.importSession(header("big"), undefined, entries, () => ({ leafId: "e19999", messageCount: 20_000 }));
    // Written to the WAL; the database file gets the pages at the checkpoint, which the import did not wait for.
    expect(statSync(dbPath).size).toBeLessThan(1 << 20);
    store.append("big", user("after", "e19999", "next")); // the store goes on meanwhile
    const until = Date.now() + 20_000;
    while (statSync(dbPath).size < 20_000_000 && Date.now() < until) await Bun.sleep(20);
    expect(statSync(dbPath).size).toBeGreaterThan(20_000_000);
    expect(store.entries("big").length).toBe(20_001);
    store.append("big", user("later", "after", "x"));
    store.close();
    expect(ids(openSqliteStore(dbPath).entries("big")).slice(-2)).toEqual(["after", "later"]);
  });

  test.concurrent("foreign keys are checked again after an import, whether it worked or failed", () => {
    using dir = tempDir();
    const store = openSqliteStore(join(dir.path, "pion.db"));
    const fk = () => ((store as unknown as { db: Database }).db.query("PRAGMA foreign_keys").get() as { foreign_keys: number }).foreign_keys;
    expect(fk()).toBe(1);
    store.importSession(header("ok"), undefined, [stored(user("a", null, "x"))], () => ({ leafId: "a", messageCount: 1 }));
    expect(fk()).toBe(1);
    const dup = [user("a", null, "x"), user("a", null, "y")].map(stored);
    expect(() => store.importSession(header("dup"), undefined, dup, () => ({ leafId: "a", messageCount: 2 }))).toThrow(PionError);
    expect(fk()).toBe(1);
    store.close();
  });

  test.concurrent("the database is in WAL mode at the current schema version", () => {
    using dir = tempDir();
    const dbPath = join(dir.path, "pion.db");
    const store = openSqliteStore(dbPath);
    const raw = new Database(dbPath);
    expect(raw.query("PRAGMA journal_mode").get()).toEqual({ journal_mode: "wal" });
    expect(raw.query("PRAGMA user_version").get()).toEqual({ user_version: SCHEMA_VERSION });
    raw.close();
    store.close();
  });

  test.concurrent("stored body is exactly the entry's JSON, and is never rewritten", () => {
    using dir = tempDir();
    const dbPath = join(dir.path, "pion.db");
    const store = openSqliteStore(dbPath);
    store.createSession(header("s1"));
    const e = user("a", null, "línea \u2028 \"quoted\"");
    store.append("s1", e);
    store.setLeaf("s1", null);
    const raw = new Database(dbPath, { readonly: true });
    expect(raw.query("SELECT seq, session_id, id, parent_id, type, created_at, body FROM entry").all()).toEqual([
      { seq: 1, session_id: "s1", id: "a", parent_id: null, type: "message", created_at: e.timestamp, body: JSON.stringify(e) },
    ]);
    raw.close();
    store.close();
  });

  test.concurrent("a schema-2 database gains roles, message offsets and the search watermark; nothing is lost", () => {
    using dir = tempDir();
    const dbPath = join(dir.path, "pion.db");
    // Schema 2 as shipped (migrations are never edited, so this stays what older pions wrote).
    const old = new Database(dbPath, { create: true });
    old.run("PRAGMA journal_mode = WAL");
    old.run(`CREATE TABLE session (id TEXT PRIMARY KEY, cwd TEXT NOT NULL, name TEXT, parent_session TEXT, file TEXT UNIQUE, leaf_id TEXT,
      created_at TEXT NOT NULL, updated_at TEXT NOT NULL, header TEXT NOT NULL, first_message TEXT,
      message_count INTEGER NOT NULL DEFAULT 0, entry_count INTEGER NOT NULL DEFAULT 0, cache TEXT)`);
    old.run(`CREATE TABLE entry (seq INTEGER PRIMARY KEY, session_id TEXT NOT NULL REFERENCES session (id), id TEXT NOT NULL, parent_id TEXT,
      type TEXT NOT NULL, created_at TEXT NOT NULL, body TEXT NOT NULL, UNIQUE (session_id, id))`);
    old.run("CREATE INDEX entry_session_seq ON entry (session_id, seq)");
    old.run("CREATE VIRTUAL TABLE entry_fts USING fts5 (text, role UNINDEXED, tokenize = 'unicode61 remove_diacritics 2')");
    old.run("CREATE TABLE lock (session_id TEXT PRIMARY KEY, pid INTEGER NOT NULL, start TEXT NOT NULL, acquired_at TEXT NOT NULL)");
    const h = header("s1");
    old.run("INSERT INTO session (id, cwd, created_at, updated_at, header, leaf_id, entry_count) VALUES (?, ?, ?, ?, ?, 'b', 2)", [h.id, h.cwd, h.timestamp, h.timestamp, JSON.stringify(h)]);
    // Schema 2 wrote pion's entries with the message before the common fields.
    const a = { type: "message", message: { role: "user", content: [{ type: "text", text: "old walrus" }], timestamp: 1 }, id: "a", parentId: null, timestamp: h.timestamp };
    const b = assistant("b", "a", "old reply");
    for (const e of [a, b]) old.run("INSERT INTO entry (session_id, id, parent_id, type, created_at, body) VALUES ('s1', ?, ?, 'message', ?, ?)", [e.id, e.parentId, e.timestamp, JSON.stringify(e)]);
    old.run("INSERT INTO entry_fts (rowid, text, role) VALUES (1, 'old walrus', 'user')");
    old.run("PRAGMA user_version = 2");
    old.close();

    const store = openSqliteStore(dbPath);
    const index = store.entryIndex("s1");
    expect(index.map((r) => [r.id, r.role])).toEqual([["a", "user"], ["b", "assistant"]]);
    const message = store.messageReader("s1");
    expect(JSON.parse(message(index[0]!.ref))).toEqual(a.message);
    expect(JSON.parse(message(index[1]!.ref))).toEqual(b.message);
    // Already indexed rows are not indexed twice; new ones are, on the next search.
    store.append("s1", user("c", "b", "new walrus"));
    expect(store.searchSessions({ query: "walrus" }).map((x) => x.entryId).sort()).toEqual(["a", "c"]);
    store.close();
    const raw = new Database(dbPath, { readonly: true });
    expect(raw.query("SELECT id, message_at IS NOT NULL AS sliced FROM entry ORDER BY seq").all()).toEqual([
      { id: "a", sliced: 0 },
      { id: "b", sliced: 0 },
      { id: "c", sliced: 1 },
    ]);
    raw.close();
  });

  test.concurrent("a database from a newer pion is refused", () => {
    using dir = tempDir();
    const dbPath = join(dir.path, "pion.db");
    openSqliteStore(dbPath).close();
    const raw = new Database(dbPath);
    raw.run(`PRAGMA user_version = ${SCHEMA_VERSION + 1}`);
    raw.close();
    expect(() => openSqliteStore(dbPath)).toThrow(PionError);
    expect(() => openSqliteStore(dbPath)).toThrow(/newer than this pion supports/);
  });

  test("entriesSince pages correctly at 100k entries, through an index (no scan, no sort)", () => {
    // What keeps it O(result): the plans of its two queries (the figure is in bench/sessions.ts).
    using dir = tempDir();
    const path = join(dir.path, "plan.db");
    openSqliteStore(path).close();
    const db = new Database(path, { readonly: true });
    const plan = (sql: string) => db.query<{ detail: string }, []>(`EXPLAIN QUERY PLAN ${sql}`).all().map((r) => r.detail).join("; ");
    for (const sql of [
      "SELECT seq FROM entry WHERE session_id = 'a' AND id = 'b'",
      "SELECT body FROM entry WHERE session_id = 'a' AND seq > 5 ORDER BY seq LIMIT 50",
    ]) {
      const p = plan(sql);
      expect(p).toMatch(/^SEARCH entry USING (COVERING )?INDEX/);
      expect(p).not.toContain("SCAN");
      expect(p).not.toContain("TEMP B-TREE");
    }
    db.close();

    const store = openSqliteStore(":memory:");
    store.createSession(header("big"));
    const all = chain(100_000);
    store.appendMany("big", all);
    store.createSession(header("other"));
    store.append("other", user("x", null, "x"));
    expect(store.entryCount("big")).toBe(100_000);

    for (let i = 0; i < 100; i++) {
      const since = all[99_000 + i * 5]!.id;
      const page = store.entriesSince("big", since, 50);
      expect(page.entries.map((e) => e.id)).toEqual(all.slice(99_001 + i * 5, 99_051 + i * 5).map((e) => e.id));
    }
    const tail = store.entriesSince("big", all[99_997]!.id);
    expect(tail).toEqual({ entries: all.slice(99_998), hasMore: false });
    store.close();
  });

  test.concurrent("search tolerates FTS syntax in the query and matches a trailing prefix", () => {
    const store = openSqliteStore(":memory:");
    store.createSession(header("s1"));
    store.append("s1", user("a", null, 'fix the "parser" AND the lexer-state NEAR bug * (urgent)'));
    store.append("s1", assistant("b", "a", "Café déjà vu: naïve résumé"));
    for (const q of ['"parser', "AND", "lexer-state", "NEAR(", "*", "(urgent", "a:b", "-x"]) {
      expect(() => store.searchSessions({ query: q })).not.toThrow();
    }
    expect(store.searchSessions({ query: "lexer-state" }).map((h) => h.entryId)).toEqual(["a"]);
    expect(store.searchSessions({ query: "pars" }).map((h) => h.entryId)).toEqual(["a"]);
    expect(store.searchSessions({ query: "cafe resume" }).map((h) => h.entryId)).toEqual(["b"]);
    expect(store.searchSessions({ query: "parser zebra" })).toEqual([]);
    expect(store.searchSessions({ query: "lexer" })[0]!.snippet).toContain("**lexer**");
    store.close();
  });

  test.concurrent("a message is cut from its body at its offset where all before it is ASCII, parsed anywhere else", () => {
    using dir = tempDir();
    const path = join(dir.path, "pion.db");
    let store = openSqliteStore(path);
    const line = (id: string, parentId: string | null, content: string) =>
      `{"type":"message","id":${JSON.stringify(id)},"parentId":${JSON.stringify(parentId)},"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":${JSON.stringify(content)}}}`;
    const rows = [
      line("a1", null, "ünïcode €"),
      // A non-ASCII id: an offset in UTF-16 units would not be the byte offset.
      line("ä€", "a1", "x"),
      // The message not the last field: no offset.
      '{"type":"message","id":"a3","parentId":"ä€","message":{"role":"user","content":"y"},"timestamp":"2026-01-01T00:00:01.000Z"}',
      line("a4", "a3", "z"),
    ];
    const entries = rows.map((body) => ({ entry: JSON.parse(body), body }));
    store.importSession(header("cut"), undefined, entries, () => ({ leafId: "a4", messageCount: 4 }));
    let db = (store as unknown as { db: Database }).db;
    const offsets = () => db.query("SELECT id, message_at FROM entry ORDER BY seq").values();
    expect(offsets()).toEqual([["a1", rows[0]!.indexOf('{"role"')], ["ä€", null], ["a3", null], ["a4", rows[3]!.indexOf('{"role"')]]);
    const context = () => Buffer.concat([...store.contextMessages("cut")].map((p) => (typeof p === "string" ? Buffer.from(p) : p))).toString();
    const messages = [
      { role: "user", content: "ünïcode €" },
      { role: "user", content: "x" },
      { role: "user", content: "y" },
      { role: "user", content: "z" },
    ];
    expect(JSON.parse(`[${context()}]`)).toEqual(messages);

    // A database from before schema 4 recorded UTF-16 offsets after non-ASCII ids too: opened
    // again, every offset whose 10 bytes before it are not the key goes, and the answer stays right.
    db.run(`UPDATE entry SET message_at = ${rows[1]!.indexOf('{"role"')} WHERE id = 'ä€'`);
    db.run("PRAGMA user_version = 3");
    store.close();
    store = openSqliteStore(path);
    db = (store as unknown as { db: Database }).db;
    expect(db.query("PRAGMA user_version").values()).toEqual([[SCHEMA_VERSION]]);
    expect(offsets()).toEqual([["a1", rows[0]!.indexOf('{"role"')], ["ä€", null], ["a3", null], ["a4", rows[3]!.indexOf('{"role"')]]);
    expect(JSON.parse(`[${context()}]`)).toEqual(messages);
    store.close();
  });
});
