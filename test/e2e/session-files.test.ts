/**
 * Session files the database does not know (issue #41): the reference's, flat in a
 * --session-dir or in its `--<cwd>--/` folders under its own agent folder, and pion's own after
 * pion.db is lost. Listed, searched, continued (-c, --session <prefix>) and, once continued by
 * pion, opened again by the reference.
 */
import { expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { Database } from "bun:sqlite";
import { describeWith } from "../support/requires.ts";
import { Pion, runPion, tempDirs, type Rec } from "../support/pion.ts";
import { setupAcp } from "../support/acp-client.ts";

const LIMIT = 60_000;
const FIXTURES = resolve(import.meta.dir, "../fixtures");
const REFERENCE_CLI = join(process.env.PION_REFERENCE_PKG ?? "/work/ref/node_modules/@earendil-works/pi-coding-agent", "dist/cli.js");

type Dirs = { home: string; cwd: string };

/** A reference fixture rewritten for `cwd`, saved as `<dir>/<time>_<id>.jsonl`; returns its path and id. */
function place(fixture: string, dir: string, cwd: string): { file: string; id: string } {
  const text = readFileSync(join(FIXTURES, fixture), "utf8").replaceAll("/home/user/project", cwd);
  const h = JSON.parse(text.split("\n")[0]!) as { id: string; timestamp: string };
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${h.timestamp.replace(/[:.]/g, "-")}_${h.id}.jsonl`);
  writeFileSync(file, text);
  return { file, id: h.id };
}

function scripted(dirs: Dirs, replies: string[]): string[] {
  const file = join(dirs.cwd, `replies-${Math.random().toString(16).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(replies.map((text) => ({ text }))));
  return ["--provider", "scripted", "--model", file];
}

const env = (dirs: Dirs) => ({ PI_CODING_AGENT_DIR: join(dirs.home, "pi-agent"), PI_OFFLINE: "1" });

async function cli(dirs: Dirs, args: string[]): Promise<Rec> {
  const r = await runPion(["sessions", ...args, "--json"], { ...dirs, env: env(dirs) });
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout);
}

/** Opens with `args`, runs one prompt, returns get_state. */
async function continueWith(dirs: Dirs, args: string[], prompt: string): Promise<Rec> {
  const p = new Pion({ ...dirs, env: env(dirs), args: ["--mode", "rpc", ...args, ...scripted(dirs, ["pion's answer"])] });
  const before = await p.request({ type: "get_state" });
  await p.request({ type: "prompt", message: prompt });
  await p.waitFor("agent_settled");
  const state = await p.request({ type: "get_state" });
  expect(await p.close()).toBe(0);
  return { before: before.data, ...state.data };
}

const lines = (file: string) => readFileSync(file, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l) as Rec);

test.concurrent("a flat --session-dir of reference files: list, search, show by prefix, -c continues the newest in place", async () => {
  const dirs = tempDirs();
  const sd = join(dirs.home, "sd");
  const older = place("reference-v3-fork-parent.jsonl", sd, dirs.cwd);
  const newer = place("reference-v3-compaction.jsonl", sd, dirs.cwd);
  const listed = await cli(dirs, ["list", "--session-dir", sd]);
  expect(listed.sessions.map((s: Rec) => [s.sessionId, s.file])).toEqual([[newer.id, newer.file], [older.id, older.file]]);
  expect(listed.sessions[0]).toMatchObject({ cwd: dirs.cwd, firstMessage: "Tell me about the project", messageCount: 7 });
  const hits = await cli(dirs, ["search", "tests", "--session-dir", sd]);
  expect(hits.results.map((h: Rec) => h.sessionId)).toContain(newer.id);
  const shown = await cli(dirs, ["show", older.id.slice(0, 13), "--session-dir", sd]);
  expect(shown.session.id).toBe(older.id);

  const before = readFileSync(newer.file, "utf8");
  const state = await continueWith(dirs, ["--session-dir", sd, "-c"], "one more thing");
  expect(state.sessionId).toBe(newer.id);
  expect(state.sessionFile).toBe(newer.file);
  const after = readFileSync(newer.file, "utf8");
  expect(after.startsWith(before)).toBe(true); // appended, never rewritten
  const added = lines(newer.file).slice(before.trimEnd().split("\n").length);
  expect(added.filter((e) => e.type === "message").map((e) => e.message.role)).toEqual(["user", "assistant"]);
  // The database holds it whole now, with nothing else beside the files.
  const db = new Database(join(sd, "pion.db"), { readonly: true });
  expect(db.query("SELECT count(*) AS n FROM entry WHERE session_id = ?1").get(newer.id)).toEqual({ n: lines(newer.file).length - 1 });
  db.close();
}, LIMIT);

describeWith("the reference opens a file pion continued", existsSync(REFERENCE_CLI) ? undefined : `${REFERENCE_CLI} is missing`, () => {
  test("--session <id prefix>, then the reference reads every message", async () => {
    const dirs = tempDirs();
    const sd = join(dirs.home, "sd");
    const s = place("reference-v3-fork-parent.jsonl", sd, dirs.cwd);
    const state = await continueWith(dirs, ["--session-dir", sd, "--session", s.id.slice(0, 13)], "continued by pion");
    expect(state.sessionId).toBe(s.id);
    expect(state.sessionFile).toBe(s.file);
    const proc = Bun.spawn(["bun", REFERENCE_CLI, "--mode", "rpc", "--session", s.file], {
      cwd: dirs.cwd,
      env: { ...process.env, PI_CODING_AGENT_DIR: join(dirs.home, "ref-agent"), PI_OFFLINE: "1" },
      stdin: new TextEncoder().encode(`${JSON.stringify({ id: "m", type: "get_messages" })}\n`),
      stdout: "pipe",
      stderr: "pipe",
    });
    const out = await new Response(proc.stdout).text();
    await proc.exited;
    const answer = out.split("\n").filter(Boolean).map((l) => JSON.parse(l) as Rec).find((r) => r.type === "response" && r.id === "m");
    const messages = answer!.data.messages as Rec[];
    expect(messages.at(-2)).toMatchObject({ role: "user", content: [{ type: "text", text: "continued by pion" }] });
    expect(messages.at(-1)).toMatchObject({ role: "assistant", content: [{ type: "text", text: "pion's answer" }] });
  }, LIMIT);
});

test.concurrent("the reference's own folder, in --<cwd>--/ subfolders: listed and continued without --session-dir", async () => {
  const dirs = tempDirs();
  const refSessions = join(dirs.home, "pi-agent", "sessions", `--${dirs.cwd.replace(/^\//, "").replace(/\//g, "-")}--`);
  const s = place("reference-v3-compaction.jsonl", refSessions, dirs.cwd);
  const listed = await cli(dirs, ["list"]);
  expect(listed.sessions.map((x: Rec) => x.file)).toEqual([s.file]);
  const state = await continueWith(dirs, ["-c"], "hello again");
  expect(state).toMatchObject({ sessionId: s.id, sessionFile: s.file });
  expect(lines(s.file).at(-1)!.message.content[0].text).toBe("pion's answer");
}, LIMIT);

test.concurrent("a changed file is read again, a gone one leaves the list", async () => {
  const dirs = tempDirs();
  const sd = join(dirs.home, "sd");
  const a = place("reference-v3-compaction.jsonl", sd, dirs.cwd);
  const b = place("reference-v3-fork-parent.jsonl", sd, dirs.cwd);
  expect((await cli(dirs, ["list", "--session-dir", sd])).sessions).toHaveLength(2);
  const last = lines(a.file).at(-1)!;
  const extra = { type: "message", id: "feedbeef", parentId: last.id, timestamp: "2030-01-01T00:00:00.000Z", message: { role: "user", content: "later", timestamp: 1 } };
  writeFileSync(a.file, `${readFileSync(a.file, "utf8")}${JSON.stringify(extra)}\n`);
  rmSync(b.file);
  const listed = await cli(dirs, ["list", "--session-dir", sd]);
  expect(listed.sessions.map((s: Rec) => [s.sessionId, s.messageCount, s.updatedAt])).toEqual([[a.id, 8, "2030-01-01T00:00:00.000Z"]]);
}, LIMIT);

test.concurrent("pion's own sessions after pion.db is deleted: listed, and -c continues them", async () => {
  const dirs = tempDirs();
  const first = await continueWith(dirs, [], "first prompt");
  const sd = join(dirs.home, "sessions");
  for (const f of ["pion.db", "pion.db-wal", "pion.db-shm"]) rmSync(join(sd, f), { force: true });
  const listed = await cli(dirs, ["list"]);
  expect(listed.sessions.map((s: Rec) => [s.sessionId, s.messageCount])).toEqual([[first.sessionId, 2]]);
  const again = await continueWith(dirs, ["-c"], "second prompt");
  expect(again.before).toMatchObject({ sessionId: first.sessionId, messageCount: 2 });
  expect(again.messageCount).toBe(4);
  expect(lines(first.sessionFile).filter((e) => e.type === "message")).toHaveLength(4);
}, LIMIT);

test.concurrent("pion.db replaced with random bytes: one stderr line, an RPC event, and the sessions back from their files", async () => {
  const dirs = tempDirs();
  const first = await continueWith(dirs, [], "before the damage");
  const db = join(dirs.home, "sessions", "pion.db");
  writeFileSync(db, Buffer.from(Array.from({ length: 50000 }, (_, i) => (i * 131) % 256)));
  const p = new Pion({ ...dirs, env: env(dirs), args: ["--mode", "rpc"] });
  const list = await p.request({ type: "list_sessions" });
  expect(list.data.sessions.map((s: Rec) => s.sessionId)).toEqual([first.sessionId]);
  const event = p.records.find((r) => r.type === "session_store_recovered");
  expect(event).toMatchObject({ unreadable: null, recovered: 0 });
  expect(event!.movedTo).toStartWith(`${db}.corrupt-`);
  expect(existsSync(event!.movedTo)).toBe(true);
  expect(await p.close()).toBe(0);
  const lines = p.stderr.trimEnd().split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain(`moved to ${event!.movedTo}`);
  const check = new Database(db, { readonly: true });
  expect(check.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
  check.close();
}, LIMIT);

test.concurrent("ACP: a pion.db of random bytes is set aside when session/list opens the store, and the editor is told", async () => {
  const { dirs, c } = setupAcp();
  const first = await continueWith(dirs, [], "before the damage");
  const db = join(dirs.home, "sessions", "pion.db");
  writeFileSync(db, Buffer.from(Array.from({ length: 50000 }, (_, i) => (i * 131) % 256)));
  await c.agent.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
  const listed = await c.agent.request("session/list", { cwd: dirs.cwd });
  expect(listed.sessions.map((x) => x.sessionId)).toEqual([first.sessionId]);
  for (let i = 0; i < 100 && c.extNotifications.length === 0; i++) await Bun.sleep(20);
  expect(c.extNotifications).toHaveLength(1);
  const note = c.extNotifications[0]!;
  expect(note.method).toBe("_pion/session_store_recovered");
  const { movedTo, recovered } = note.params as { movedTo: string; recovered: number };
  expect(recovered).toBe(0);
  expect(movedTo).toStartWith(`${db}.corrupt-`);
  expect(existsSync(movedTo)).toBe(true);
  await c.close();
}, LIMIT);

test.concurrent("a file pion continued, then continued by another writer: -c brings the new entries in and goes on after them", async () => {
  const dirs = tempDirs();
  const sd = join(dirs.home, "sd");
  const s = place("reference-v3-compaction.jsonl", sd, dirs.cwd);
  await continueWith(dirs, ["--session-dir", sd, "-c"], "pion's turn");
  // The reference's next turn, as it writes it.
  const last = lines(s.file).at(-1)!;
  const theirs = [
    { type: "message", id: "c0ffee01", parentId: last.id, timestamp: "2031-01-01T00:00:00.000Z", message: { role: "user", content: [{ type: "text", text: "the reference's turn" }], timestamp: 1 } },
    { type: "message", id: "c0ffee02", parentId: "c0ffee01", timestamp: "2031-01-01T00:00:01.000Z", message: { role: "assistant", content: [{ type: "text", text: "its answer" }], api: "anthropic-messages", provider: "fake", model: "fake-model", usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: "stop", timestamp: 2 } },
  ];
  writeFileSync(s.file, `${readFileSync(s.file, "utf8")}${theirs.map((e) => JSON.stringify(e)).join("\n")}\n`);
  const again = await continueWith(dirs, ["--session-dir", sd, "-c"], "pion again");
  expect(again.sessionId).toBe(s.id);
  const all = lines(s.file);
  const ids = all.map((e) => e.id);
  expect(new Set(ids).size).toBe(ids.length); // nothing written twice
  const tail = all.slice(-4);
  expect(tail.slice(0, 2).map((e) => e.id)).toEqual(["c0ffee01", "c0ffee02"]);
  expect(tail[2]).toMatchObject({ parentId: "c0ffee02", message: { role: "user", content: [{ type: "text", text: "pion again" }] } });
}, LIMIT);

test.concurrent("ACP: session/list shows a reference file of the session folder, session/load opens it and a prompt continues it in place", async () => {
  const { fake, dirs, c } = setupAcp();
  const s = place("reference-v3-compaction.jsonl", join(dirs.home, "sessions"), dirs.cwd);
  await c.agent.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
  const listed = await c.agent.request("session/list", { cwd: dirs.cwd });
  expect(listed.sessions.map((x) => [x.sessionId, x.title])).toEqual([[s.id, "Tell me about the project"]]);
  await c.agent.request("session/load", { sessionId: s.id, cwd: dirs.cwd, mcpServers: [] });
  const replayed = (c.updates.get(s.id) ?? []).filter((u) => u.sessionUpdate === "user_message_chunk");
  expect(replayed.length).toBeGreaterThan(0);
  fake.enqueue({ blocks: [{ type: "text", text: "from ACP" }] });
  await c.agent.request("session/prompt", { sessionId: s.id, prompt: [{ type: "text", text: "and now?" }] });
  expect(await c.close()).toBe(0);
  await fake.stop();
  expect(lines(s.file).at(-1)!.message.content[0].text).toBe("from ACP");
}, LIMIT);
