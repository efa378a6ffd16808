import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PermissionEntry } from "../../../src/store/entries.ts";
import { withJsonlExport } from "../../../src/store/jsonl-export.ts";
import { LazyStore } from "../../../src/store/lazy-store.ts";
import { openSqliteStore } from "../../../src/store/sqlite-store.ts";
import type { SessionStore } from "../../../src/store/store.ts";
import { header, stored, tick, user } from "./helpers.ts";
import { errorCode } from "../../support/error-code.ts";

const dir = mkdtempSync(join(tmpdir(), "pion-granted-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let dbs = 0;

// Composed as pion composes them: sessions on disk with their JSONL files, and --no-session's.
const stores: [string, () => SessionStore][] = [
  ["on disk, with the JSONL export", () => new LazyStore(() => withJsonlExport(openSqliteStore(join(dir, `${++dbs}.db`))))],
  ["in memory", () => new LazyStore(() => openSqliteStore(":memory:"))],
];

/** A permission entry recording an allow_always answer that added `addedRules`. */
function permission(id: string, parentId: string | null, addedRules: string[]): PermissionEntry {
  return { type: "permission", id, parentId, timestamp: tick(), toolCallId: `call-${id}`, toolName: "bash", decision: "allow", by: "host", mode: "ask", reason: "ask mode", addedRules };
}

const code = errorCode;

describe.each(stores)("granted rules, %s", (_name, open) => {
  test("an append's grants are answered in grant order, per session, beside the entry that records them", () => {
    const s = open();
    s.createSession(header("g1"), join(dir, `g1-${dbs}.jsonl`));
    s.createSession(header("g2"));
    s.append("g1", user("a", null, "go"));
    s.append("g1", permission("b", "a", ["bash(make)"]), ["bash(make)"]);
    const c = permission("c", "b", ["bash(npm test)", "bash(cat)"]);
    s.append("g1", c, ["bash(npm test)", "bash(cat)"]);
    s.append("g2", user("a", null, "other"));
    expect(s.grantedRules("g1")).toEqual([
      { entryId: "b", rule: "bash(make)" },
      { entryId: "c", rule: "bash(npm test)" },
      { entryId: "c", rule: "bash(cat)" },
    ]);
    expect(s.grantedRules("g2")).toEqual([]);
    expect(s.getEntry("g1", "c")).toEqual(c);
    expect(code(() => s.grantedRules("nope"))).toBe("unknown_session");
    // appendMany (a fork's copy) writes the grants it is given with its entries
    s.createSession(header("g3"));
    s.appendMany("g3", s.entries("g1"), s.grantedRules("g1").slice(0, 1));
    expect(s.grantedRules("g3")).toEqual([{ entryId: "b", rule: "bash(make)" }]);
    s.close();
  });

  test("an import grants nothing: its permission entries keep their addedRules as written", () => {
    const s = open();
    const entries = [user("a", null, "go"), permission("b", "a", ["bash(*)"])];
    s.importSession(header("i1"), undefined, entries.map(stored), () => ({ leafId: "b", messageCount: 1 }));
    expect(s.grantedRules("i1")).toEqual([]);
    expect(s.entries("i1")).toEqual(entries);
    // appending to the imported session later grants only what is granted with the append
    s.append("i1", permission("c", "b", ["bash(ls)"]), ["bash(ls)"]);
    expect(s.grantedRules("i1")).toEqual([{ entryId: "c", rule: "bash(ls)" }]);
    s.close();
  });

  test("a grant is committed with its entry or not at all", () => {
    const s = open();
    s.createSession(header("t1"));
    s.append("t1", user("a", null, "go"));
    // a grant naming no entry of the session: the whole append fails, its entry included
    expect(() => s.appendMany("t1", [permission("b", "a", [])], [{ entryId: "zz", rule: "bash(*)" }])).toThrow();
    expect(s.entryCount("t1")).toBe(1);
    // an entry that cannot be written takes its grant with it
    expect(code(() => s.append("t1", permission("a", null, ["bash(*)"]), ["bash(*)"]))).toBe("duplicate_entry");
    expect(s.grantedRules("t1")).toEqual([]);
    s.close();
  });
});

test("grants outlive the process and stay out of the JSONL file", () => {
  const db = join(dir, "reopen.db");
  const file = join(dir, "reopen.jsonl");
  const first = withJsonlExport(openSqliteStore(db));
  first.createSession(header("r1"), file);
  first.append("r1", user("a", null, "go"));
  first.append("r1", permission("b", "a", ["bash(make)"]), ["bash(make)"]);
  first.close();
  const again = openSqliteStore(db);
  expect(again.grantedRules("r1")).toEqual([{ entryId: "b", rule: "bash(make)" }]);
  again.close();
  const lines = readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l));
  expect(lines.map((l) => l.type)).toEqual(["session", "message", "permission"]);
  expect(Object.keys(lines[2]).sort()).toEqual(Object.keys(permission("b", "a", [])).sort());
});

test("a database from before grants were recorded keeps its permission entries and grants nothing from them", () => {
  const path = join(dir, "old.db");
  const s = openSqliteStore(path);
  s.createSession(header("o1"));
  s.appendMany("o1", [user("a", null, "go"), permission("b", "a", ["bash(*)"])]);
  s.close();
  // Back to schema version 4, the last one without the table.
  const raw = new Database(path);
  raw.run("DROP TABLE granted_rule");
  raw.run("PRAGMA user_version = 4");
  raw.close();
  const migrated = openSqliteStore(path);
  expect(migrated.grantedRules("o1")).toEqual([]);
  expect(migrated.getEntry("o1", "b")).toMatchObject({ type: "permission", addedRules: ["bash(*)"] });
  migrated.close();
});
