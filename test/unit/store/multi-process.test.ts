import { expect, test } from "bun:test";
import { join } from "node:path";
import { syncJsonl, withJsonlExport } from "../../../src/store/jsonl-export.ts";
import { processOwner } from "../../../src/store/owner.ts";
import { openSqliteStore } from "../../../src/store/sqlite-store.ts";
import { PionError } from "../../../src/util/errors.ts";
import { header, importJsonl, tempDir, user } from "./helpers.ts";

const worker = join(import.meta.dir, "append-worker.ts");

test("two processes append to different sessions of one database at the same time", async () => {
  using dir = tempDir();
  const dbPath = join(dir.path, "pion.db");
  const run = (sessionId: string) =>
    Bun.spawn([process.execPath, worker, dbPath, sessionId, "1500"], { stdout: "pipe", stderr: "pipe" });
  const procs = [run("a-session"), run("b-session")];
  const results = await Promise.all(
    procs.map(async (p) => ({ code: await p.exited, out: await p.stdout.text(), err: await p.stderr.text() })),
  );
  expect(results).toEqual([
    { code: 0, out: "done\n", err: "" },
    { code: 0, out: "done\n", err: "" },
  ]);
  const store = openSqliteStore(dbPath);
  for (const id of ["a-session", "b-session"]) {
    const entries = store.entries(id);
    expect(entries).toHaveLength(1500);
    expect(entries.every((e, i) => e.parentId === (i === 0 ? null : entries[i - 1]!.id))).toBe(true);
    expect(store.getSession(id)?.leafId).toBe(entries[1499]!.id);
  }
  // Both workers released their locks on close.
  store.acquireSession("a-session");
  store.close();
});

test("a session locked by a live process is refused; a dead owner's lock is taken over", async () => {
  using dir = tempDir();
  const dbPath = join(dir.path, "pion.db");
  const sleeper = Bun.spawn(["sleep", "30"], { stdout: "ignore" });
  const other = openSqliteStore(dbPath, { owner: processOwner(sleeper.pid) });
  const mine = openSqliteStore(dbPath);
  try {
    other.acquireSession("s1");
    mine.createSession(header("s1"));

    let refused: unknown;
    try {
      mine.acquireSession("s1");
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(PionError);
    expect((refused as PionError).code).toBe("session_locked");
    expect((refused as PionError).message).toContain(`pid ${sleeper.pid}`);
    // Re-acquiring one's own lock is fine, and other sessions are free.
    other.acquireSession("s1");
    mine.acquireSession("s2");

    sleeper.kill("SIGKILL");
    await sleeper.exited;
    mine.acquireSession("s1");
    mine.append("s1", user("a", null, "taken over"));
    expect(() => other.acquireSession("s1")).toThrow(/open for writing in another pion process/); // roles swapped
  } finally {
    sleeper.kill("SIGKILL");
    other.close();
    mine.close();
  }
});

test("releaseSession frees the lock for another live process", () => {
  using dir = tempDir();
  const dbPath = join(dir.path, "pion.db");
  const a = openSqliteStore(dbPath);
  const b = openSqliteStore(dbPath, { owner: { pid: process.pid, start: "another-start" } });
  try {
    a.acquireSession("s1");
    expect(() => b.acquireSession("s1")).toThrow(`(pid ${process.pid})`);
    a.releaseSession("s1");
    b.acquireSession("s1");
  } finally {
    a.close();
    b.close();
  }
});

test("a lock whose pid was recycled by another program is stale", () => {
  using dir = tempDir();
  const dbPath = join(dir.path, "pion.db");
  // Our pid is alive, but with a start token that is not ours: the recorded owner is gone.
  const ghost = openSqliteStore(dbPath, { owner: { pid: process.pid, start: "1" } });
  const mine = openSqliteStore(dbPath);
  try {
    ghost.acquireSession("s1");
    mine.acquireSession("s1");
  } finally {
    ghost.close();
    mine.close();
  }
});

test("kill -9 loses no announced entry; the next open takes the lock and completes the JSONL", async () => {
  using dir = tempDir();
  const dbPath = join(dir.path, "pion.db");
  const file = join(dir.path, "s1.jsonl");
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, "announce-worker.ts"), dbPath, "s1", file], {
    stdout: "pipe",
    stderr: "inherit",
  });
  const announced: string[] = [];
  const decoder = new TextDecoder();
  let buffered = "";
  for await (const chunk of proc.stdout) {
    buffered += decoder.decode(chunk, { stream: true });
    const lines = buffered.split("\n");
    buffered = lines.pop() ?? "";
    announced.push(...lines);
    if (announced.length >= 300) break;
  }
  proc.kill("SIGKILL");
  await proc.exited;

  const store = withJsonlExport(openSqliteStore(dbPath));
  store.acquireSession("s1"); // the dead writer's lock is stale
  const stored = new Set(store.entries("s1").map((e) => e.id));
  expect(announced.filter((id) => !stored.has(id))).toEqual([]);
  syncJsonl(store, "s1");
  expect(importJsonl(file).entries).toEqual(store.entries("s1"));
  store.close();
});
