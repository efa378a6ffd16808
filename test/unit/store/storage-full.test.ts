/**
 * A database that cannot grow (SQLite's max_page_count stands in for a full disk): the append
 * fails as a storage error naming the disk and the path, commits nothing, and the store works
 * again once it may grow; the JSONL export agrees with the database afterwards.
 */
import { expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Entry } from "../../../src/store/entries.ts";
import { withJsonlExport } from "../../../src/store/jsonl-export.ts";
import { sessionFilePath } from "../../../src/store/paths.ts";
import { withStorageErrors } from "../../../src/store/storage-guard.ts";
import { openSqliteStore } from "../../../src/store/sqlite-store.ts";
import { isStorageError } from "../../../src/store/storage-error.ts";
import { PionError } from "../../../src/util/errors.ts";
import type { SessionStore } from "../../../src/store/store.ts";
import { tempDir, tick } from "./helpers.ts";

const big = (id: string, parentId: string | null): Entry =>
  ({ type: "message", id, parentId, timestamp: tick(), message: { role: "user", content: "z".repeat(40_000), timestamp: 1 } }) as Entry;

test("max_page_count reached: storage_full naming the path, nothing half-written, fine again once it may grow", () => {
  using dir = tempDir();
  const dbPath = join(dir.path, "pion.db");
  const sqlite = openSqliteStore(dbPath);
  // The store's own connection (the pragma is per connection); test-only access to a private field.
  const raw = (sqlite as unknown as { db: Database }).db;
  const store = withStorageErrors(withJsonlExport(sqlite), dbPath);
  const header = { type: "session" as const, version: 3 as const, id: "s1", timestamp: tick(), cwd: "/w" };
  const file = sessionFilePath(dir.path, "/w", header.timestamp, "s1");
  store.createSession(header, file);
  store.acquireSession("s1");
  const pages = (raw.query("PRAGMA page_count").get() as { page_count: number }).page_count;
  raw.run(`PRAGMA max_page_count = ${pages + 4}`);
  let parent: string | null = null;
  let failure: unknown;
  const written: string[] = [];
  for (let i = 0; i < 50 && failure === undefined; i++) {
    const e = big(`e${String(i).padStart(7, "0")}`, parent);
    try {
      store.append("s1", e);
      written.push(e.id);
      parent = e.id;
    } catch (err) {
      failure = err;
    }
  }
  expect(isStorageError(failure)).toBe(true);
  expect((failure as PionError).code).toBe("storage_full");
  expect((failure as PionError).message).toContain(`${dbPath} could not be written`);
  expect((failure as PionError).message).toContain("No space left on the disk mounted at");
  expect(store.entries("s1").map((e) => e.id)).toEqual(written); // reads still answer
  raw.run("PRAGMA max_page_count = 1073741823");
  const next = big("f0000001", parent);
  store.append("s1", next);
  written.push(next.id);
  expect(store.entries("s1").map((e) => e.id)).toEqual(written);
  // Releasing and closing after the failure do not throw.
  store.releaseSession("s1");
  store.close();
  const lines = readFileSync(file, "utf8").trimEnd().split("\n").slice(1).map((l) => (JSON.parse(l) as { id: string }).id);
  expect(lines).toEqual(written);
  const check = new Database(dbPath, { readonly: true });
  expect(check.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
  check.close();
});

test("releasing and closing never throw, even when the disk refuses the lock's removal", () => {
  const full = () => {
    throw Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" });
  };
  const store = withStorageErrors({ releaseSession: full, close: full, append: full } as unknown as SessionStore, "/x/pion.db");
  expect(() => store.releaseSession("s")).not.toThrow();
  expect(() => store.close()).not.toThrow();
  expect(() => store.append("s", {} as Entry)).toThrow(/No space left on the disk mounted at .*\/x\/pion\.db could not be written/);
});
