import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { startFakeProvider, type FakeProvider } from "../support/fake-provider.ts";
import { Pion, tempDirs, writeFakeModels, type Rec } from "../support/pion.ts";

const FIXTURES = resolve(import.meta.dir, "../fixtures");

function setup() {
  const fake = startFakeProvider();
  const dirs = tempDirs();
  writeFakeModels(dirs.home, fake.url);
  return { fake, ...dirs };
}

const spawn = (dirs: { home: string; cwd: string }, extra: string[] = []) =>
  new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model", ...extra] });

async function say(p: Pion, fake: FakeProvider, text: string, reply = `re: ${text}`) {
  fake.enqueue({ blocks: [{ type: "text", text: reply }] });
  const from = p.records.length;
  await p.request({ type: "prompt", message: text });
  await p.waitFor("agent_settled", from);
}

const jsonl = (file: string): Rec[] =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));

describe("sessions on disk", () => {
  test.concurrent("entries are persisted, exported as JSONL, and a restart resumes the same branch", async () => {
    const { fake, home, cwd } = setup();
    const p = spawn({ home, cwd });
    await say(p, fake, "first");
    await say(p, fake, "second");
    const st = (await p.request({ type: "get_state" })).data;
    const file: string = st.sessionFile;
    expect(file.startsWith(join(home, "sessions"))).toBe(true);
    const { data } = await p.request({ type: "get_entries" });
    expect(data.entries.map((e: Rec) => e.type)).toEqual(["model_change", "thinking_level_change", "message", "message", "message", "message"]);
    expect(data.leafId).toBe(data.entries.at(-1).id);
    for (let i = 1; i < data.entries.length; i++) expect(data.entries[i].parentId).toBe(data.entries[i - 1].id);
    for (const e of data.entries) expect(e.id).toMatch(/^[0-9a-f]{8}$/);
    // message_end events carry the id of the entry they announce
    const announced = p.records.filter((r) => r.type === "message_end").map((r) => r.entryId);
    expect(announced).toEqual(data.entries.slice(2).map((e: Rec) => e.id));
    expect(await p.close()).toBe(0);

    const lines = jsonl(file);
    expect(lines[0]).toEqual({ type: "session", version: 3, id: st.sessionId, timestamp: expect.any(String), cwd });
    expect(lines.slice(1)).toEqual(data.entries);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(home, "sessions")).mode & 0o777).toBe(0o700);

    const q = spawn({ home, cwd }, ["--session", file]);
    const again = (await q.request({ type: "get_state" })).data;
    expect(again.sessionId).toBe(st.sessionId);
    expect(again.messageCount).toBe(4);
    await say(q, fake, "third");
    const after = (await q.request({ type: "get_entries", since: data.leafId })).data.entries;
    expect(after.map((e: Rec) => e.message.role)).toEqual(["user", "assistant"]);
    expect(after[0].parentId).toBe(data.leafId);
    // the request after resuming carries the whole conversation
    const msgs = (fake.requests.at(-1)!.body as { messages: unknown[] }).messages;
    expect(msgs.length).toBe(5);
    await q.close();
    expect(jsonl(file).length).toBe(1 + data.entries.length + 2);
    await fake.stop();
  });

  test.concurrent("--no-session writes nothing; a bare start writes nothing either", async () => {
    const { fake, home, cwd } = setup();
    const p = spawn({ home, cwd }, ["--no-session"]);
    await say(p, fake, "hello");
    const st = (await p.request({ type: "get_state" })).data;
    expect(st.sessionFile).toBeUndefined();
    expect((await p.request({ type: "get_entries" })).data.entries.length).toBe(4);
    await p.close();
    expect(existsSync(join(home, "sessions"))).toBe(false);
    const q = spawn({ home, cwd });
    await q.request({ type: "get_state" });
    await q.close();
    const files = existsSync(join(home, "sessions")) ? readdirSync(join(home, "sessions"), { recursive: true }).filter((f) => String(f).endsWith(".jsonl")) : [];
    expect(files).toEqual([]);
    await fake.stop();
  });

  test.concurrent("a new home's database is the same whether the binary writes it from its template or the source makes it", async () => {
    const { fake } = setup();
    const made: Rec[] = [];
    for (const binary of [true, false]) {
      const dirs = tempDirs();
      writeFakeModels(dirs.home, fake.url);
      const p = new Pion({ ...dirs, binary, args: ["--mode", "rpc", "--model", "fake/fake-model"] });
      await say(p, fake, `made by ${binary ? "the binary" : "the source"}`);
      expect(await p.close()).toBe(0);
      expect(p.stderr).not.toContain("template");
      const path = join(dirs.home, "sessions", "pion.db");
      expect(statSync(path).mode & 0o777).toBe(0o600);
      expect(readdirSync(join(dirs.home, "sessions")).filter((f) => f.endsWith(".new"))).toEqual([]);
      const db = new Database(path, { readonly: true });
      const pragma = (name: string) => Object.values(db.query(`PRAGMA ${name}`).get() as object)[0];
      made.push({
        schema: db.query("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name").all(),
        version: pragma("user_version"),
        pageSize: pragma("page_size"),
        journal: pragma("journal_mode"),
        integrity: pragma("integrity_check"),
        messages: (db.query("SELECT count(*) AS n FROM entry WHERE type = 'message'").get() as Rec).n,
      });
      db.close();
    }
    expect(made[0]).toEqual(made[1]!);
    expect(made[0]).toMatchObject({ pageSize: 16384, journal: "wal", integrity: "ok", messages: 2 });
  });

  test.concurrent("get_entries: since, limit/hasMore, unknown since; get_tree with a fork as a branch", async () => {
    const { fake, home, cwd } = setup();
    const p = spawn({ home, cwd });
    await say(p, fake, "one");
    await say(p, fake, "two");
    const all = (await p.request({ type: "get_entries" })).data.entries;
    const paged = (await p.request({ type: "get_entries", limit: 2 })).data;
    expect(paged.entries).toEqual(all.slice(0, 2));
    expect(paged.hasMore).toBe(true);
    const rest = (await p.request({ type: "get_entries", since: all[1].id, limit: 100 })).data;
    expect(rest.entries).toEqual(all.slice(2));
    expect(rest.hasMore).toBe(false);
    const bad = await p.request({ type: "get_entries", since: "zzzz" });
    expect(bad).toMatchObject({ success: false, error: "Entry not found: zzzz" });

    const tree = (await p.request({ type: "get_tree" })).data;
    expect(tree.leafId).toBe(all.at(-1).id);
    expect(tree.tree.length).toBe(1);
    let depth = 0;
    for (let n = tree.tree[0]; n; n = n.children[0]) depth++;
    expect(depth).toBe(all.length);

    const forkable = (await p.request({ type: "get_fork_messages" })).data.messages;
    expect(forkable.map((m: Rec) => m.text)).toEqual(["one", "two"]);
    const parentFile = (await p.request({ type: "get_state" })).data.sessionFile;
    const f = await p.request({ type: "fork", entryId: forkable[1].entryId });
    expect(f.data).toEqual({ text: "two", cancelled: false });
    const st = (await p.request({ type: "get_state" })).data;
    expect(st.sessionFile).not.toBe(parentFile);
    expect(st.messageCount).toBe(2);
    expect(jsonl(st.sessionFile)[0].parentSession).toBe(parentFile);
    expect((await p.request({ type: "fork", entryId: "nope1234" })).error).toBe("Invalid entry ID for forking");
    expect((await p.request({ type: "branch", entryId: forkable[0].entryId })).data.text).toBe("one");
    expect((await p.request({ type: "get_branch_messages" })).data.messages).toEqual([]);
    await p.close();
    await fake.stop();
  });

  test.concurrent("new_session, clone, switch_session by path and id, missing file is an error", async () => {
    const { fake, home, cwd } = setup();
    const p = spawn({ home, cwd });
    expect((await p.request({ type: "clone" })).success).toBe(false);
    await say(p, fake, "keep me");
    const first = (await p.request({ type: "get_state" })).data;
    expect((await p.request({ type: "clone" })).data).toEqual({ cancelled: false });
    const cloned = (await p.request({ type: "get_state" })).data;
    expect(cloned.sessionId).not.toBe(first.sessionId);
    expect(cloned.messageCount).toBe(2);
    expect((await p.request({ type: "new_session" })).data).toEqual({ cancelled: false });
    expect((await p.request({ type: "get_state" })).data.messageCount).toBe(0);
    expect((await p.request({ type: "switch_session", sessionPath: first.sessionFile })).data).toEqual({ cancelled: false });
    expect((await p.request({ type: "get_last_assistant_text" })).data).toEqual({ text: "re: keep me" });
    await p.request({ type: "switch_session", sessionPath: cloned.sessionId });
    expect((await p.request({ type: "get_state" })).data.sessionId).toBe(cloned.sessionId);
    const missing = await p.request({ type: "switch_session", sessionPath: join(cwd, "nope.jsonl") });
    expect(missing.success).toBe(false);
    expect(missing.error).toContain("not found");
    expect((await p.request({ type: "get_state" })).data.sessionId).toBe(cloned.sessionId);
    await p.close();
    await fake.stop();
  });

  test.concurrent("sessions written by the reference agent are imported and continued", async () => {
    const { fake, home, cwd } = setup();
    const v3 = join(cwd, "parent.jsonl");
    copyFileSync(join(FIXTURES, "reference-v3-fork-parent.jsonl"), v3);
    const linesBefore = readFileSync(v3, "utf8").split("\n").filter(Boolean).length;
    const p = spawn({ home, cwd });
    expect((await p.request({ type: "switch_session", sessionPath: v3 })).success).toBe(true);
    const entries = (await p.request({ type: "get_entries" })).data.entries;
    expect(entries.length).toBe(linesBefore - 1);
    const msgs = (await p.request({ type: "get_messages" })).data.messages;
    expect(msgs.some((m: Rec) => m.role === "assistant")).toBe(true);
    await say(p, fake, "continue it");
    expect((await p.request({ type: "get_state" })).data.sessionFile).toBe(v3);
    expect(readFileSync(v3, "utf8").split("\n").filter(Boolean).length).toBe(linesBefore + 2);

    const v1 = join(cwd, "legacy.jsonl");
    copyFileSync(join(FIXTURES, "reference-v1-linear.jsonl"), v1);
    const before = readFileSync(v1, "utf8");
    expect((await p.request({ type: "switch_session", sessionPath: v1 })).success).toBe(true);
    const v1entries = (await p.request({ type: "get_entries" })).data.entries;
    expect(v1entries.length).toBeGreaterThan(900);
    const tree = (await p.request({ type: "get_tree" })).data.tree;
    expect(tree.length).toBe(1);
    expect(readFileSync(v1, "utf8")).toBe(before);
    // The v1 session continues in a new v3 file written from the database: header + every entry.
    const v3file = (await p.request({ type: "get_state" })).data.sessionFile;
    expect(v3file).not.toBe(v1);
    const written = readFileSync(v3file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
    expect(written[0]).toMatchObject({ type: "session", version: 3 });
    expect(written.slice(1).map((e: Rec) => e.id)).toEqual(v1entries.map((e: Rec) => e.id));
    await p.close();
    await fake.stop();
  });

  test.concurrent("a session file that fails to import leaves nothing behind; fixed, it imports", async () => {
    const { fake, home, cwd } = setup();
    const good = readFileSync(join(FIXTURES, "reference-v3-fork-parent.jsonl"), "utf8").split("\n").filter(Boolean);
    const file = join(cwd, "broken.jsonl");
    // An entry id repeated further down: found only while writing, after the session row and
    // earlier entries went in; the whole import must still fail as one.
    await Bun.write(file, `${[...good, good[2]].join("\n")}\n`);
    const p = spawn({ home, cwd });
    const before = (await p.request({ type: "get_state" })).data.sessionId;
    const r = await p.request({ type: "switch_session", sessionPath: file });
    expect(r.success).toBe(false);
    expect(r.error).toContain("already exists");
    expect((await p.request({ type: "get_state" })).data.sessionId).toBe(before);
    const listed = (await p.request({ type: "list_sessions" })).data.sessions.map((x: Rec) => x.sessionId);
    expect(listed).not.toContain(JSON.parse(good[0]!).id);
    // Repaired, the same path imports as a whole (no half-imported session was kept for it).
    await Bun.write(file, `${good.join("\n")}\n`);
    expect((await p.request({ type: "switch_session", sessionPath: file })).success).toBe(true);
    expect((await p.request({ type: "get_entries" })).data.entries.length).toBe(good.length - 1);
    await p.close();
    await fake.stop();
  });

  test.concurrent("session name, stats, list and search", async () => {
    const { fake, home, cwd } = setup();
    const p = spawn({ home, cwd });
    await say(p, fake, "find the walrus", "the walrus is here");
    const n = await p.request({ type: "set_session_name", name: "zoo" });
    expect(n.success).toBe(true);
    const ev = p.records.find((r) => r.type === "session_info_changed");
    expect(ev).toMatchObject({ name: "zoo", entryId: expect.stringMatching(/^[0-9a-f]{8}$/) });
    expect(p.records.indexOf(ev!)).toBeLessThan(p.records.indexOf(n));
    const stats = (await p.request({ type: "get_session_stats" })).data;
    expect(stats).toMatchObject({
      userMessages: 1,
      assistantMessages: 1,
      toolCalls: 0,
      toolResults: 0,
      totalMessages: 2,
      tokens: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, total: 15 },
      contextUsage: { tokens: 15, contextWindow: 200000 },
    });
    expect(stats.cost).toBeCloseTo((10 * 3 + 5 * 15) / 1e6, 12);
    const list = (await p.request({ type: "list_sessions" })).data.sessions;
    expect(list[0]).toMatchObject({ name: "zoo", firstMessage: "find the walrus", cwd });
    const hits = (await p.request({ type: "search_sessions", query: "walrus" })).data.results;
    expect(hits.map((h: Rec) => h.role).sort()).toEqual(["assistant", "user"]);
    await p.close();
    await fake.stop();
  });

  test.concurrent("kill -9 loses nothing announced; the database passes integrity_check", async () => {
    const { fake, home, cwd } = setup();
    const p = spawn({ home, cwd });
    await say(p, fake, "before");
    fake.enqueue({ blocks: [{ type: "toolCall", id: "t1", name: "bash", arguments: { command: "sleep 20" } }] });
    await p.request({ type: "prompt", message: "slow" });
    await p.waitFor("tool_execution_start");
    const announced = p.records.filter((r) => r.type === "message_end").map((r) => r.entryId);
    const file = (await p.request({ type: "get_state" })).data.sessionFile;
    p.kill("SIGKILL");
    await p.exited;
    const db = new Database(join(home, "sessions", "pion.db"));
    expect(db.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
    const ids = new Set(db.query("SELECT id FROM entry").all().map((r) => (r as { id: string }).id));
    db.close();
    expect(announced.length).toBeGreaterThan(0);
    for (const id of announced) expect(ids.has(id)).toBe(true);
    // reopening completes the export and the session can go on
    const q = spawn({ home, cwd }, ["--session", file]);
    const entries = (await q.request({ type: "get_entries" })).data.entries;
    for (const id of announced) expect(entries.some((e: Rec) => e.id === id)).toBe(true);
    await q.close();
    await fake.stop();
  });

  test.concurrent("two processes share one sessions directory; a session open in one is locked for the other", async () => {
    const { fake, home, cwd } = setup();
    const a = spawn({ home, cwd });
    const b = spawn({ home, cwd });
    await Promise.all([say(a, fake, "from a"), say(b, fake, "from b")]);
    const fa = (await a.request({ type: "get_state" })).data.sessionFile;
    const r = await b.request({ type: "switch_session", sessionPath: fa });
    expect(r.success).toBe(false);
    expect(r.error).toContain(String(a.pid));
    await a.close();
    expect((await b.request({ type: "switch_session", sessionPath: fa })).success).toBe(true);
    await b.close();
    await fake.stop();
  });
});
