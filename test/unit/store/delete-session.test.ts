import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { PermissionEntry } from "../../../src/store/entries.ts";
import { withJsonlExport } from "../../../src/store/jsonl-export.ts";
import { LazyStore } from "../../../src/store/lazy-store.ts";
import { processOwner } from "../../../src/store/owner.ts";
import { openSqliteStore } from "../../../src/store/sqlite-store.ts";
import { errorCode } from "../../support/error-code.ts";
import { header, tempDir, tick, user } from "./helpers.ts";

const grant = (id: string, parentId: string): PermissionEntry => ({
  type: "permission", id, parentId, timestamp: tick(), toolCallId: `call-${id}`, toolName: "bash", decision: "allow", by: "host", mode: "ask", reason: "ask mode", addedRules: ["bash(make)"],
});

/** Rows of each table that belong to `sessionId` (search rows through their entries' seqs, read before the delete). */
function rowsOf(dbPath: string, sessionId: string, ftsRowids: number[]): Record<string, number> {
  const db = new Database(dbPath, { readonly: true });
  try {
    const count = (sql: string, ...p: (string | number)[]) => (db.query(sql).get(...p) as { n: number }).n;
    return {
      session: count("SELECT count(*) AS n FROM session WHERE id = ?", sessionId),
      entry: count("SELECT count(*) AS n FROM entry WHERE session_id = ?", sessionId),
      granted_rule: count("SELECT count(*) AS n FROM granted_rule WHERE session_id = ?", sessionId),
      lock: count("SELECT count(*) AS n FROM lock WHERE session_id = ?", sessionId),
      entry_fts: ftsRowids.length === 0 ? 0 : count(`SELECT count(*) AS n FROM entry_fts WHERE rowid IN (${ftsRowids.join(",")})`),
    };
  } finally {
    db.close();
  }
}

const seqsOf = (dbPath: string, sessionId: string): number[] => {
  const db = new Database(dbPath, { readonly: true });
  try {
    return (db.query("SELECT seq FROM entry WHERE session_id = ?").all(sessionId) as { seq: number }[]).map((r) => r.seq);
  } finally {
    db.close();
  }
};

test("deleteSession removes the session's rows in every table and its JSONL file; other sessions keep theirs", () => {
  using dir = tempDir();
  const dbPath = join(dir.path, "pion.db");
  const store = new LazyStore(() => withJsonlExport(openSqliteStore(dbPath)));
  for (const id of ["gone", "kept"]) {
    store.createSession(header(id), join(dir.path, `${id}.jsonl`));
    store.acquireSession(id);
    store.append(id, user(`${id}-a`, null, `findable ${id}`));
    store.append(id, grant(`${id}-b`, `${id}-a`), ["bash(make)"]);
  }
  expect(store.searchSessions({ query: "findable" }).map((h) => h.sessionId).sort()).toEqual(["gone", "kept"]);
  const seqs = { gone: seqsOf(dbPath, "gone"), kept: seqsOf(dbPath, "kept") };
  const full = { session: 1, entry: 2, granted_rule: 1, lock: 1, entry_fts: 1 };
  expect(rowsOf(dbPath, "gone", seqs.gone)).toEqual(full);

  store.deleteSession("gone");
  expect(rowsOf(dbPath, "gone", seqs.gone)).toEqual({ session: 0, entry: 0, granted_rule: 0, lock: 0, entry_fts: 0 });
  expect(rowsOf(dbPath, "kept", seqs.kept)).toEqual(full);
  expect(existsSync(join(dir.path, "gone.jsonl"))).toBe(false);
  expect(readFileSync(join(dir.path, "kept.jsonl"), "utf8")).toContain("findable kept");
  expect(store.getSession("gone")).toBeUndefined();
  expect(store.searchSessions({ query: "findable" }).map((h) => h.sessionId)).toEqual(["kept"]);
  expect(errorCode(() => store.deleteSession("gone"))).toBe("unknown_session");
  // The id is free again, and the kept session goes on.
  store.createSession(header("gone"));
  store.append("kept", user("kept-c", "kept-b", "more"));
  store.close();
});

test("deleteSession refuses, deleting nothing, while another live process holds the session", async () => {
  using dir = tempDir();
  const dbPath = join(dir.path, "pion.db");
  const sleeper = Bun.spawn(["sleep", "30"], { stdout: "ignore" });
  const other = openSqliteStore(dbPath, { owner: processOwner(sleeper.pid) });
  const mine = withJsonlExport(openSqliteStore(dbPath));
  try {
    mine.createSession(header("s1"), join(dir.path, "s1.jsonl"));
    mine.append("s1", user("a", null, "hi"));
    other.acquireSession("s1");
    expect(() => mine.deleteSession("s1")).toThrow(`Session s1 is open for writing in another pion process (pid ${sleeper.pid})`);
    expect(errorCode(() => mine.deleteSession("s1"))).toBe("session_locked");
    expect(mine.entries("s1").map((e) => e.id)).toEqual(["a"]);
    expect(existsSync(join(dir.path, "s1.jsonl"))).toBe(true);
    sleeper.kill("SIGKILL");
    await sleeper.exited;
    mine.deleteSession("s1"); // a dead owner's lock holds nothing
    expect(mine.getSession("s1")).toBeUndefined();
  } finally {
    sleeper.kill("SIGKILL");
    other.close();
    mine.close();
  }
});
