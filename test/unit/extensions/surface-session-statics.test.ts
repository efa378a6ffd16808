import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionManager } from "../../../src/extensions/surface/session-manager.ts";

/**
 * The reference's finding statics of SessionManager (continueRecent, forkFrom, findById, list,
 * listAll) over one sessions root: sessions written by pion's SessionManager and by the
 * reference's, the reference's recorded fixtures, files that are no session, pion's pion.db, and
 * a custom folder holding two cwds' sessions. pion's answers are checked on their own, and with
 * PION_REFERENCE_PKG compared with the reference's on the same folders (both read their home from
 * PION_HOME / PI_CODING_AGENT_DIR, set to the same temp dir).
 */
type Rec = Record<string, any>;
const REF = process.env.PION_REFERENCE_PKG;
const FIXTURES = join(import.meta.dir, "../../fixtures");
const FIXTURE_FILES = ["reference-v3-fork-parent.jsonl", "reference-v3-fork-child.jsonl", "reference-v3-compaction.jsonl", "reference-v1-linear.jsonl"];
const tmp = (name: string) => mkdtempSync(join(tmpdir(), `pion-statics-${name}-`));
const home = tmp("home");
const cwd = tmp("cwd");
const otherCwd = tmp("other-cwd");
const custom = tmp("custom");
const sessionsRoot = join(home, "sessions");
const fixtureFolder = join(sessionsRoot, "--recorded--");
const saved = { PION_HOME: process.env.PION_HOME, PI_CODING_AGENT_DIR: process.env.PI_CODING_AGENT_DIR };
let reference: Rec | undefined;
const pion = SessionManager as unknown as Rec;

const user = (text: string, timestamp: number) => ({ role: "user", content: [{ type: "text", text }], timestamp });
const assistant = (text: string, timestamp: number) => ({
  role: "assistant",
  content: [{ type: "text", text }],
  api: "anthropic-messages",
  provider: "fake",
  model: "m",
  usage: {},
  stopReason: "stop",
  timestamp,
});
const at = (seconds: number) => new Date(1_700_000_000_000 + seconds * 1000);
const touch = (path: string, seconds: number) => utimesSync(path, at(seconds), at(seconds));

/** A session written by `impl`'s SessionManager.create; its file's modification time set to `seconds`. */
function written(impl: Rec, sessionCwd: string, sessionDir: string | undefined, texts: string[], seconds: number, name?: string): string {
  const m = impl.create(sessionCwd, sessionDir);
  texts.forEach((t, i) => m.appendMessage(i % 2 === 0 ? user(t, at(seconds - 10 + i).getTime()) : assistant(t, at(seconds - 10 + i).getTime())));
  if (name) m.appendSessionInfo(name);
  touch(m.getSessionFile(), seconds);
  return m.getSessionFile();
}

const plain = (infos: Rec[]): Rec[] => infos.map((i) => ({ ...i, created: i.created.toISOString(), modified: i.modified.toISOString() }));
const lines = (path: string): Rec[] =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Rec);
/**
 * A manager's state a caller can see, with pion's and the reference's readers alike. A fork of a
 * v1 file holds entries without ids: the reference's leaf is then undefined, pion's null.
 */
const state = (m: Rec) => ({ file: m.getSessionFile(), dir: m.getSessionDir(), cwd: m.getCwd(), header: m.getHeader(), entries: m.getEntries(), leaf: m.getLeafId() ?? null });

const mine: Rec = {};
beforeAll(async () => {
  process.env.PION_HOME = home;
  process.env.PI_CODING_AGENT_DIR = home;
  if (REF) reference = (await import(join(REF, "dist/index.js"))).SessionManager;
  else console.warn("surface-session-statics: PION_REFERENCE_PKG is unset; the comparisons with the reference are skipped");
  mine.first = written(pion, cwd, undefined, ["first question", "an answer"], 100);
  mine.named = written(pion, cwd, undefined, ["later question", "a later answer"], 300, "named one");
  if (reference) mine.theirs = written(reference, cwd, undefined, ["their question", "their answer"], 200);
  mkdirSync(fixtureFolder, { recursive: true });
  FIXTURE_FILES.forEach((f, i) => {
    copyFileSync(join(FIXTURES, f), join(fixtureFolder, f));
    touch(join(fixtureFolder, f), -1000 - i);
  });
  writeFileSync(join(fixtureFolder, "not-a-session.jsonl"), "nothing here\n");
  // The reference looks past blank, malformed and null lines for the header.
  writeFileSync(join(fixtureFolder, "late-header.jsonl"), `\n{oops\nnull\n${readFileSync(join(FIXTURES, FIXTURE_FILES[0]!), "utf8").split("\n")[0]}\n`);
  writeFileSync(join(sessionsRoot, "pion.db"), "");
  // A custom folder holds two cwds' sessions, and a recorded one of a third cwd.
  mine.customOwn = written(pion, cwd, custom, ["custom question", "custom answer"], 400);
  mine.customOther = written(pion, otherCwd, custom, ["elsewhere question", "elsewhere answer"], 500);
  copyFileSync(join(FIXTURES, FIXTURE_FILES[2]!), join(custom, "recorded.jsonl"));
});
afterAll(() => {
  for (const [k, v] of Object.entries(saved)) v === undefined ? delete process.env[k] : (process.env[k] = v);
  for (const dir of [home, cwd, otherCwd, custom]) rmSync(dir, { recursive: true, force: true });
});

describe("SessionManager's finding statics", () => {
  test("list: the folder's sessions, newest first, with the reference's SessionInfo", async () => {
    const infos = plain(await pion.list(cwd));
    const own = infos.filter((i) => i.path !== mine.theirs);
    expect(own.map((i) => [i.path, i.name, i.messageCount, i.firstMessage, i.allMessagesText, i.cwd])).toEqual([
      [mine.named, "named one", 2, "later question", "later question a later answer", cwd],
      [mine.first, undefined, 2, "first question", "first question an answer", cwd],
    ]);
    expect(own[1]!.modified).toBe(at(91).toISOString());
    if (reference) expect(plain(await reference.list(cwd))).toEqual(infos);
  });

  test("list with a custom folder: only the cwd's sessions, unless it is the cwd's default folder", async () => {
    expect((await pion.list(cwd, custom)).map((i: Rec) => i.path)).toEqual([mine.customOwn]);
    expect((await pion.list(otherCwd, custom)).map((i: Rec) => i.path)).toEqual([mine.customOther]);
    if (reference) {
      for (const c of [cwd, otherCwd, "/home/user/project"]) expect(plain(await reference.list(c, custom))).toEqual(plain(await pion.list(c, custom)));
      expect(plain(await reference.list(cwd, join(sessionsRoot, "--recorded--")))).toEqual(plain(await pion.list(cwd, join(sessionsRoot, "--recorded--"))));
    }
  });

  test("listAll: every cwd folder of the sessions root (pion.db and non-sessions skipped), or one folder", async () => {
    const all = plain(await pion.listAll());
    const paths = all.map((i) => i.path);
    expect(paths).toEqual(expect.arrayContaining([mine.first, mine.named, ...FIXTURE_FILES.map((f) => join(fixtureFolder, f)), join(fixtureFolder, "late-header.jsonl")]));
    expect(paths.some((p) => p.endsWith("not-a-session.jsonl") || p.endsWith("pion.db"))).toBe(false);
    const progress: Rec[] = [];
    const viaDir = plain(await pion.listAll(custom, (loaded: number, total: number, partial?: Rec[]) => progress.push({ loaded, total, partial: partial?.length })));
    expect(viaDir.map((i) => i.path)).toEqual(expect.arrayContaining([mine.customOwn, mine.customOther, join(custom, "recorded.jsonl")]));
    expect(progress.at(-1)).toEqual({ loaded: 3, total: 3, partial: 3 });
    if (reference) {
      expect(plain(await reference.listAll())).toEqual(all);
      const theirProgress: Rec[] = [];
      expect(plain(await reference.listAll(custom, (loaded: number, total: number, partial?: Rec[]) => theirProgress.push({ loaded, total, partial: partial?.length })))).toEqual(viaDir);
      expect(theirProgress).toEqual(progress);
      // A signal is the second argument (or the third, after a folder and a progress callback).
      const aborted = AbortSignal.abort();
      for (const impl of [pion, reference]) {
        await expect(impl.listAll(undefined, aborted)).rejects.toThrow();
        await expect(impl.listAll(custom, undefined, aborted)).rejects.toThrow();
      }
    }
  });

  test("findById: the file whose header has exactly that id", async () => {
    const infos = [...(await pion.list(cwd)), ...(await pion.listAll(join(sessionsRoot, "--recorded--")))];
    for (const info of infos) {
      const folder = info.path.startsWith(fixtureFolder) ? fixtureFolder : undefined;
      const found = pion.findById(info.cwd, info.id, folder);
      // late-header.jsonl has the fork parent's id too: the first file in directory order is answered, as in the reference.
      const shared = infos.filter((i) => i.id === info.id).map((i) => i.path);
      expect(shared).toContain(found);
      if (reference) expect(reference.findById(info.cwd, info.id, folder)).toBe(found);
    }
    // A custom folder answers only the cwd's own sessions.
    expect(pion.findById(cwd, lines(join(fixtureFolder, FIXTURE_FILES[2]!))[0]!.id, fixtureFolder)).toBeUndefined();
    expect(pion.findById(cwd, "nope")).toBeUndefined();
    const otherId = lines(mine.customOther)[0]!.id;
    expect(pion.findById(cwd, otherId, custom)).toBeUndefined();
    expect(pion.findById(otherCwd, otherId, custom)).toBe(mine.customOther);
    if (reference) expect([reference.findById(cwd, otherId, custom), reference.findById(otherCwd, otherId, custom)]).toEqual([undefined, mine.customOther]);
  });

  test("continueRecent: the most recently modified session (of the cwd, in a custom folder), appended to", () => {
    const recent = pion.continueRecent(cwd);
    expect(recent.getSessionFile()).toBe(mine.named);
    expect(recent.getEntries().map((e: Rec) => e.type)).toEqual(["message", "message", "session_info"]);
    const inCustom = pion.continueRecent(cwd, custom);
    expect(inCustom.getSessionFile()).toBe(mine.customOwn);
    if (reference) {
      expect(state(reference.continueRecent(cwd))).toEqual(state(pion.continueRecent(cwd)));
      expect(state(reference.continueRecent(cwd, custom))).toEqual(state(pion.continueRecent(cwd, custom)));
      expect(state(reference.continueRecent(otherCwd, custom))).toEqual(state(pion.continueRecent(otherCwd, custom)));
    }
    recent.appendMessage(user("one more", at(301).getTime()));
    expect(lines(mine.named).at(-1)).toMatchObject({ type: "message", message: { content: [{ text: "one more" }] } });
    // A folder with no session: a new one there, not written yet.
    const empty = tmp("empty");
    const fresh = pion.continueRecent(cwd, empty);
    expect([fresh.getEntries(), fresh.getSessionDir(), existsSync(fresh.getSessionFile())]).toEqual([[], empty, false]);
    if (reference) {
      const theirs = reference.continueRecent(cwd, empty);
      expect([theirs.getEntries(), theirs.getSessionDir(), existsSync(theirs.getSessionFile())]).toEqual([[], empty, false]);
    }
    rmSync(empty, { recursive: true, force: true });
  });

  test("forkFrom: a new file in the target folder with the source's entries as written, its header naming the source", () => {
    const sources = tmp("fork-sources");
    const target = tmp("fork-target");
    const forks = tmp("forks");
    for (const f of FIXTURE_FILES) {
      const source = join(sources, f);
      copyFileSync(join(FIXTURES, f), source);
      const fork = pion.forkFrom(source, target, forks);
      const [header, ...entries] = lines(fork.getSessionFile());
      expect(header).toMatchObject({ type: "session", version: 3, cwd: target, parentSession: source });
      expect(entries).toEqual(lines(source).slice(1));
      expect(fork.getEntries()).toEqual(entries);
      if (reference) {
        const theirs = reference.forkFrom(source, target, forks);
        const [theirHeader, ...theirEntries] = lines(theirs.getSessionFile());
        const { id: _a, timestamp: _b, ...theirRest } = theirHeader!;
        const { id: _c, timestamp: _d, ...myRest } = header!;
        expect(myRest).toEqual(theirRest);
        expect(entries).toEqual(theirEntries);
        const { file: _e, header: _f, ...theirState } = state(theirs);
        const { file: _g, header: _h, ...myState } = state(fork);
        expect(myState).toEqual(theirState);
      }
    }
    expect(pion.forkFrom(join(sources, FIXTURE_FILES[0]!), target, forks, { id: "my.id-1" }).getSessionId()).toBe("my.id-1");
    rmSync(sources, { recursive: true, force: true });
    rmSync(target, { recursive: true, force: true });
    rmSync(forks, { recursive: true, force: true });
  });

  test("forkFrom's errors: an empty file, a file not starting with a header, an invalid id; a torn last line is ended", () => {
    const dir = tmp("fork-errors");
    const empty = join(dir, "empty.jsonl");
    writeFileSync(empty, "");
    const headerLater = join(dir, "header-later.jsonl");
    const fixture = readFileSync(join(FIXTURES, FIXTURE_FILES[0]!), "utf8").split("\n");
    writeFileSync(headerLater, `${fixture[1]}\n${fixture[0]}\n`);
    const torn = join(dir, "torn.jsonl");
    writeFileSync(torn, fixture.slice(0, 3).join("\n"));
    const impls = reference ? [pion, reference] : [pion];
    for (const impl of impls) {
      expect(() => impl.forkFrom(empty, dir, dir)).toThrow(`Cannot fork: source session file is empty or invalid: ${empty}`);
      expect(() => impl.forkFrom(headerLater, dir, dir)).toThrow(`Cannot fork: source session file is empty or invalid: ${headerLater}`);
      expect(() => impl.forkFrom(join(dir, "missing.jsonl"), dir, dir)).toThrow("Cannot fork: source session file is empty or invalid");
      expect(() => impl.forkFrom(torn, dir, dir, { id: "-bad" })).toThrow("Session id must be non-empty");
      expect(readFileSync(torn, "utf8")).toBe(`${fixture.slice(0, 3).join("\n")}\n`);
      writeFileSync(torn, fixture.slice(0, 3).join("\n"));
    }
    rmSync(dir, { recursive: true, force: true });
  });
});
