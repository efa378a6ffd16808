/**
 * An unusable pion.db (random bytes, a file cut short mid-page) is moved aside with its WAL and
 * made anew from the session files; entries only it had are copied into their files where they
 * can be read, and the message says how many, or that nothing could be read.
 */
import { expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { appendFileSync, closeSync, existsSync, openSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { openSessionFolder } from "../../../src/modes/open-store.ts";
import type { Recovery } from "../../../src/store/db-recovery.ts";
import type { Entry } from "../../../src/store/entries.ts";
import { sessionFilePath } from "../../../src/store/paths.ts";
import { tempDir, tick } from "./helpers.ts";

const user = (id: string, parentId: string | null, text: string): Entry =>
  ({ type: "message", id, parentId, timestamp: tick(), message: { role: "user", content: text, timestamp: 1 } }) as Entry;

function folder(base: string, recoveries: Recovery[] = []) {
  return openSessionFolder({
    base,
    named: true,
    env: {},
    fileFor: (h) => sessionFilePath(base, h.cwd, h.timestamp, h.id),
    onRecovery: (r) => recoveries.push(r),
  });
}

/** A session of three entries in its file, and a fourth that only the database has (a crash before the export). */
function seeded(base: string): { file: string } {
  const store = folder(base);
  const header = { type: "session" as const, version: 3 as const, id: "s1", timestamp: tick(), cwd: "/w" };
  const file = sessionFilePath(base, "/w", header.timestamp, "s1");
  store.createSession(header, file);
  store.appendMany("s1", [user("a0000001", null, "one"), user("a0000002", "a0000001", "two"), user("a0000003", "a0000002", "three")]);
  store.close();
  const raw = new Database(join(base, "pion.db"));
  const lost = user("a0000004", "a0000003", "four");
  raw.run("INSERT INTO entry (session_id, id, parent_id, type, created_at, body, role) VALUES ('s1', ?1, ?2, 'message', ?3, ?4, 'user')", [lost.id, lost.parentId, lost.timestamp, JSON.stringify(lost)]);
  raw.run("PRAGMA wal_checkpoint(TRUNCATE)");
  raw.close();
  return { file };
}

const aside = (base: string) => readdirSync(base).filter((f) => f.startsWith("pion.db.corrupt-"));

test("random bytes: moved aside, rebuilt from the files, nothing of it readable is said", () => {
  using dir = tempDir();
  const { file } = seeded(dir.path);
  writeFileSync(join(dir.path, "pion.db"), Buffer.from(Array.from({ length: 40000 }, (_, i) => (i * 7919) % 251)));
  const recoveries: Recovery[] = [];
  const store = folder(dir.path, recoveries);
  expect(recoveries).toHaveLength(1);
  expect(recoveries[0]!.unreadable).toBeNull();
  expect(recoveries[0]!.message).toContain("not a SQLite database");
  expect(recoveries[0]!.message).toContain(recoveries[0]!.movedTo);
  const name = recoveries[0]!.movedTo.split("/").at(-1)!;
  expect(aside(dir.path).sort()).toEqual([name, `${name}-wal`]); // the WAL goes with it
  const list = store.listSessions();
  expect(list.sessions.map((s) => [s.sessionId, s.messageCount])).toEqual([["s1", 3]]);
  expect(store.entries("s1").map((e) => e.id)).toEqual(["a0000001", "a0000002", "a0000003"]);
  store.close();
  const db = new Database(join(dir.path, "pion.db"), { readonly: true });
  expect(db.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
  db.close();
  expect(readFileSync(file, "utf8").trimEnd().split("\n")).toHaveLength(4);
});

test("a file ending mid-page: the entry only the database had is copied into the session file", () => {
  using dir = tempDir();
  const { file } = seeded(dir.path);
  appendFileSync(join(dir.path, "pion.db"), Buffer.alloc(1000, 0x55));
  const recoveries: Recovery[] = [];
  const store = folder(dir.path, recoveries);
  expect(recoveries.map((r) => [r.recovered, r.unreadable])).toEqual([[1, 0]]);
  expect(recoveries[0]!.message).toContain("1 entry only it had");
  expect(store.entries(store.listSessions().sessions[0]!.sessionId).map((e) => e.id)).toEqual(["a0000001", "a0000002", "a0000003", "a0000004"]);
  store.close();
  expect(readFileSync(file, "utf8").trimEnd().split("\n").at(-1)).toContain('"id":"a0000004"');
});

test("truncated: the cut is found on open and the files are what is left", () => {
  using dir = tempDir();
  seeded(dir.path);
  const db = join(dir.path, "pion.db");
  truncateSync(db, statSync(db).size - 8192);
  const recoveries: Recovery[] = [];
  const store = folder(dir.path, recoveries);
  expect(recoveries).toHaveLength(1);
  expect(recoveries[0]!.why).toContain("cut short");
  expect(store.listSessions().sessions.map((s) => s.sessionId)).toEqual(["s1"]);
  expect(store.entries("s1").length).toBeGreaterThanOrEqual(3);
  store.close();
  expect(existsSync(recoveries[0]!.movedTo)).toBe(true);
});

test("damage SQLite reports while in use: a storage_corrupt error, and the next open moves the file aside", () => {
  using dir = tempDir();
  const base = dir.path;
  const store = folder(base);
  const header = { type: "session" as const, version: 3 as const, id: "s2", timestamp: tick(), cwd: "/w" };
  store.createSession(header, sessionFilePath(base, "/w", header.timestamp, "s2"));
  let parent: string | null = null;
  for (let i = 0; i < 200; i++) {
    const e = user(`b${String(i).padStart(7, "0")}`, parent, "y".repeat(2000));
    store.append("s2", e);
    parent = e.id;
  }
  const raw = new Database(join(base, "pion.db"));
  raw.run("PRAGMA wal_checkpoint(TRUNCATE)");
  raw.close();
  // Garbage over every page but the first two (the header and the schema).
  const db = join(base, "pion.db");
  const size = statSync(db).size;
  const fd = openSync(db, "r+");
  writeSync(fd, Buffer.alloc(size - 32768, 0xa5), 0, size - 32768, 32768);
  closeSync(fd);
  let failure: unknown;
  try {
    store.entries("s2");
  } catch (err) {
    failure = err;
  }
  expect((failure as { code?: string }).code).toBe("storage_corrupt");
  expect(existsSync(`${db}.damaged`)).toBe(true);
  store.close();
  const recoveries: Recovery[] = [];
  const again = folder(base, recoveries);
  expect(recoveries.map((r) => r.why)).toEqual(["SQLite reported it damaged while in use"]);
  expect(existsSync(`${db}.damaged`)).toBe(false);
  expect(again.entries("s2")).toHaveLength(200);
  again.close();
});
