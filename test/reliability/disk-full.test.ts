/**
 * A disk that fills during a run (issue #41), on a small tmpfs (root only; under CI a missing
 * root is a failing test, see requires.ts): the failed write ends the run before another model
 * request, with stopReason "error" and a message naming the disk and the path; RPC keeps serving
 * and works again once space is back; JSON mode exits 1 with one line; the bash tool says when
 * its output could not be saved. The files and the database are checked on disk afterwards.
 */
import { afterAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describeWith } from "../support/requires.ts";
import { Pion, promptToResult, runPion, tinyProvider, writeFakeModels, writeSettings, type Rec } from "../support/pion.ts";
import { startAcp } from "../support/acp-client.ts";
import { startFakeProvider } from "../support/fake-provider.ts";
import { runShell } from "../../src/tools/shell.ts";
import { formatShellResult } from "../../src/tools/bash.ts";
import type { Entry } from "../../src/store/entries.ts";
import { withJsonlExport } from "../../src/store/jsonl-export.ts";
import { withStorageErrors } from "../../src/store/storage-guard.ts";
import { openSqliteStore } from "../../src/store/sqlite-store.ts";

const LIMIT = 60_000;
const mounts: string[] = [];

function canMount(): string | undefined {
  if (process.getuid?.() !== 0) return "root (to mount a small tmpfs)";
  const probe = mkdtempSync(join(tmpdir(), "pion-mount-probe-"));
  const r = Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", probe]);
  if (r.exitCode !== 0) return `a tmpfs mount (${r.stderr.toString().trim()})`;
  Bun.spawnSync(["umount", probe]);
  rmSync(probe, { recursive: true, force: true });
  return undefined;
}

/** A tmpfs of `size` mounted on a new folder, unmounted after the tests. */
function smallDisk(size: string): string {
  const dir = mkdtempSync(join(tmpdir(), "pion-full-"));
  const r = Bun.spawnSync(["mount", "-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir]);
  if (r.exitCode !== 0) throw new Error(`mount failed: ${r.stderr}`);
  mounts.push(dir);
  return dir;
}

/** Writes a filler file until the disk refuses more. */
function fill(dir: string): string {
  const path = join(dir, "filler");
  const fd = openSync(path, "w");
  const chunk = Buffer.alloc(4096, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (err) {
    expect((err as { code?: string }).code).toBe("ENOSPC");
  } finally {
    closeSync(fd);
  }
  return path;
}

afterAll(() => {
  for (const m of mounts) {
    Bun.spawnSync(["umount", "-l", m]);
    rmSync(m, { recursive: true, force: true });
  }
});

function setup(disk: string, replies: string[]) {
  const home = join(disk, "home");
  const cwd = join(disk, "cwd");
  mkdirSync(home, { recursive: true });
  mkdirSync(cwd, { recursive: true });
  const script = join(mkdtempSync(join(tmpdir(), "pion-replies-")), "replies.json");
  writeFileSync(script, JSON.stringify(replies.map((text) => ({ text }))));
  return { home, cwd, args: ["--provider", "scripted", "--model", script], env: { PI_CODING_AGENT_DIR: join(tmpdir(), "pion-no-pi-agent") } };
}

function onDisk(home: string) {
  const sessions = join(home, "sessions");
  const db = new Database(join(sessions, "pion.db"), { readonly: true });
  const integrity = db.query("PRAGMA integrity_check").get();
  const rows = db.query<{ id: string; role: string | null }, []>("SELECT id, role FROM entry WHERE type = 'message' ORDER BY seq").all();
  db.close();
  const folder = readdirSync(sessions).find((f) => f.startsWith("--"))!;
  const file = join(sessions, folder, readdirSync(join(sessions, folder))[0]!);
  const lines = readFileSync(file, "utf8").trimEnd().split("\n").slice(1).map((l) => JSON.parse(l) as Rec);
  return { integrity, rows, fileIds: lines.filter((e) => e.type === "message").map((e) => e.id) };
}

describeWith("a full disk (tmpfs)", canMount(), () => {
  test("RPC: the run ends on the failed write, reads and writes answer, and space back makes it work again", async () => {
    const disk = smallDisk("4m");
    const s = setup(disk, ["first answer", "second answer", "third answer"]);
    const p = new Pion({ home: s.home, cwd: s.cwd, env: s.env, args: ["--mode", "rpc", ...s.args] });
    const one = await promptToResult(p, "one");
    expect(one.at(-1)).toMatchObject({ type: "prompt_result", stopReason: "stop" });
    const filler = fill(disk);

    const two = await promptToResult(p, "two");
    const result = two.at(-1)!;
    expect(result.stopReason).toBe("error");
    expect(result.errorMessage).toContain(`No space left on the disk mounted at ${disk}`);
    expect(result.errorMessage).toContain(join(s.home, "sessions", "pion.db"));
    // No model request was sent for it: no assistant message, and the next prompt gets the second reply.
    expect(two.filter((r) => r.type === "message_end" && r.message.role === "assistant")).toEqual([]);
    const state = await p.request({ type: "get_state" });
    expect(state.success).toBe(true);
    const named = await p.request({ type: "set_session_name", name: "full" });
    expect(named.success).toBe(false);
    expect(named.error).toContain("No space left");

    rmSync(filler);
    const three = await promptToResult(p, "three");
    expect(three.at(-1)).toMatchObject({ stopReason: "stop" });
    const answer = three.find((r) => r.type === "message_end" && r.message.role === "assistant")!;
    expect(answer.message.content[0].text).toBe("second answer");
    const announced = [...one, ...two, ...three].filter((r) => r.type === "message_end" && r.entryId).map((r) => r.entryId);
    expect(await p.close()).toBe(0);
    expect(p.stderr).not.toMatch(/SQLiteError|\n\s+at /);

    const after = onDisk(s.home);
    expect(after.integrity).toEqual({ integrity_check: "ok" });
    expect(after.rows.map((r) => r.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(after.rows.map((r) => r.id)).toEqual(announced);
    expect(after.fileIds).toEqual(announced);
  }, LIMIT);

  test("JSON and print mode: exit 1 with one line naming the disk, and the session as it was", async () => {
    const disk = smallDisk("4m");
    const s = setup(disk, ["first answer", "never sent"]);
    const first = await runPion(["--mode", "json", ...s.args, "one"], { home: s.home, cwd: s.cwd, env: s.env });
    expect(first.code).toBe(0);
    const filler = fill(disk);
    const r = await runPion(["--mode", "json", "-c", ...s.args, "two"], { home: s.home, cwd: s.cwd, env: s.env });
    expect(r.code).toBe(1);
    const lines = r.stderr.trimEnd().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`No space left on the disk mounted at ${disk}`);
    expect(r.stdout).not.toContain("never sent");
    const printed = await runPion(["-p", "-c", ...s.args, "three"], { home: s.home, cwd: s.cwd, env: s.env });
    expect(printed.code).toBe(1);
    expect(printed.stderr.trimEnd().split("\n")).toEqual([expect.stringContaining(`No space left on the disk mounted at ${disk}`)]);
    expect(printed.stdout).toBe("");
    rmSync(filler); // SQLite needs room to open the database even to read it
    const after = onDisk(s.home);
    expect(after.integrity).toEqual({ integrity_check: "ok" });
    expect(after.rows.map((x) => x.role)).toEqual(["user", "assistant"]);
    expect(after.fileIds).toEqual(after.rows.map((x) => x.id));
  }, LIMIT);

  test("ACP: a prompt on a full disk fails with the message, the agent keeps serving and works again with space", async () => {
    const disk = smallDisk("4m");
    const home = join(disk, "home");
    const cwd = join(disk, "cwd");
    mkdirSync(cwd, { recursive: true });
    mkdirSync(home, { recursive: true });
    const fake = startFakeProvider();
    writeFakeModels(home, fake.url);
    writeSettings(home, { defaultProvider: "fake", defaultModel: "fake-model" });
    const c = startAcp({ home, cwd, env: { PI_CODING_AGENT_DIR: join(tmpdir(), "pion-no-pi-agent") } });
    await c.agent.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
    const { sessionId } = await c.agent.request("session/new", { cwd, mcpServers: [] });
    const say = (t: string) => c.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: t }] });
    fake.enqueue({ blocks: [{ type: "text", text: "first" }] });
    expect((await say("one")).stopReason).toBe("end_turn");
    const filler = fill(disk);
    let failure: { message?: string } | undefined;
    try {
      await say("two");
    } catch (err) {
      failure = err as { message?: string };
    }
    expect(failure?.message).toContain(`No space left on the disk mounted at ${disk}`);
    expect(fake.requests.length).toBe(1); // nothing was sent for it
    const listed = await c.agent.request("session/list", {});
    expect(listed.sessions.map((x) => x.sessionId)).toEqual([sessionId]);
    rmSync(filler);
    fake.enqueue({ blocks: [{ type: "text", text: "second" }] });
    expect((await say("three")).stopReason).toBe("end_turn");
    expect(await c.close()).toBe(0);
    await fake.stop();
    expect(c.stderr()).not.toMatch(/SQLiteError|\n\s+at /);
    const after = onDisk(home);
    expect(after.integrity).toEqual({ integrity_check: "ok" });
    expect(after.rows.map((r) => r.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(after.fileIds).toEqual(after.rows.map((r) => r.id));
  }, LIMIT);

  test("a threshold compaction that cannot be saved ends the run: no turn is sent after it", async () => {
    const disk = smallDisk("4m");
    const home = join(disk, "home");
    const cwd = join(disk, "cwd");
    mkdirSync(cwd, { recursive: true });
    mkdirSync(home, { recursive: true });
    const fake = startFakeProvider();
    writeFakeModels(home, fake.url, { small: tinyProvider(fake.url) });
    writeSettings(home, { compaction: { keepRecentTokens: 30, reserveTokens: 1000 } });
    const p = new Pion({ home, cwd, env: { PI_CODING_AGENT_DIR: join(tmpdir(), "pion-no-pi-agent") }, args: ["--mode", "rpc", "--model", "small/tiny"] });
    for (const [t, input] of [["one", 500], ["two", 3200]] as const) {
      fake.enqueue({ blocks: [{ type: "text", text: `answer to ${t} `.repeat(5) }], usage: { input, output: 10 } });
      expect((await promptToResult(p, `${t} `.repeat(10))).at(-1)).toMatchObject({ stopReason: "stop" });
    }
    const filler = fill(disk);
    fake.enqueue({ blocks: [{ type: "text", text: "SUMMARY" }] });
    fake.enqueue({ blocks: [{ type: "text", text: "never asked for" }] });
    const sent = fake.requests.length;
    const run = await promptToResult(p, "three");
    expect(run.find((r) => r.type === "compaction_start")).toMatchObject({ reason: "threshold" });
    expect(run.at(-1)).toMatchObject({ type: "prompt_result", stopReason: "error" });
    expect(run.at(-1)!.errorMessage).toContain("No space left");
    expect(fake.requests.length).toBe(sent + 1); // the summary only: no turn after it
    rmSync(filler);
    expect(await p.close()).toBe(0);
    await fake.stop();
    expect(p.stderr).not.toMatch(/SQLiteError|\n\s+at /);
    const after = onDisk(home);
    expect(after.integrity).toEqual({ integrity_check: "ok" });
    expect(after.fileIds).toEqual(after.rows.map((r) => r.id));
  }, LIMIT);

  test("the JSONL export refused (ENOSPC) while the database commits: completed from the database once space is back", () => {
    const disk = smallDisk("256k");
    const dbDir = mkdtempSync(join(tmpdir(), "pion-db-"));
    const dbPath = join(dbDir, "pion.db");
    const store = withStorageErrors(withJsonlExport(openSqliteStore(dbPath)), dbPath);
    const header = { type: "session" as const, version: 3 as const, id: "s1", timestamp: new Date().toISOString(), cwd: "/w" };
    const file = join(disk, "--w--", "s1.jsonl");
    store.createSession(header, file);
    store.acquireSession("s1");
    const entry = (id: string, parentId: string | null) =>
      ({ type: "message", id, parentId, timestamp: new Date().toISOString(), message: { role: "user", content: "x".repeat(2000), timestamp: 1 } }) as Entry;
    store.append("s1", entry("e0000001", null));
    const filler = fill(disk);
    store.append("s1", entry("e0000002", "e0000001")); // committed; the file is behind
    expect(store.entries("s1").map((e) => e.id)).toEqual(["e0000001", "e0000002"]);
    rmSync(filler);
    store.append("s1", entry("e0000003", "e0000002"));
    store.releaseSession("s1");
    store.close();
    const ids = readFileSync(file, "utf8").trimEnd().split("\n").slice(1).map((l) => (JSON.parse(l) as Rec).id);
    expect(ids).toEqual(["e0000001", "e0000002", "e0000003"]);
    rmSync(dbDir, { recursive: true, force: true });
  });

  test("bash: a full output folder is said in the result", async () => {
    const disk = smallDisk("256k");
    fill(disk);
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = disk;
    try {
      const r = await runShell("head -c 300000 /dev/zero | tr '\\0' 'y'; echo done", { cwd: tmpdir() });
      expect(r.outputNotSaved).toContain(`the disk holding ${disk} is full`);
      const text = formatShellResult(r).content.map((c) => (c.type === "text" ? c.text : "")).join("");
      expect(text).toContain("output could not be saved");
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
    }
  }, LIMIT);
});
