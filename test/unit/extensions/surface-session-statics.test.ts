import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionManager } from "../../../src/extensions/surface/session-manager.ts";

/**
 * The reference's finding statics of SessionManager (continueRecent, forkFrom, findById, list,
 * listAll) over the same folders: sessions written by pion's SessionManager, by the reference's,
 * and a reference fixture; with PION_REFERENCE_PKG, pion's answers are compared with the reference's.
 */
type Rec = Record<string, any>;
const REF = process.env.PION_REFERENCE_PKG;
const FIXTURES = join(import.meta.dir, "../../fixtures");
const home = mkdtempSync(join(tmpdir(), "pion-statics-home-"));
const cwd = mkdtempSync(join(tmpdir(), "pion-statics-cwd-"));
const saved = { PION_HOME: process.env.PION_HOME, PI_CODING_AGENT_DIR: process.env.PI_CODING_AGENT_DIR };
let reference: Rec | undefined;

const user = (text: string, timestamp: number) => ({ role: "user", content: [{ type: "text", text }], timestamp });
const assistant = (text: string, timestamp: number) => ({ role: "assistant", content: [{ type: "text", text }], api: "anthropic-messages", provider: "fake", model: "m", usage: {}, stopReason: "stop", timestamp });

beforeAll(async () => {
  process.env.PION_HOME = home;
  process.env.PI_CODING_AGENT_DIR = home;
  if (REF) reference = (await import(join(REF, "dist/index.js"))).SessionManager;
  // Two sessions of `cwd` written by pion, one named; a fixture of another folder copied in.
  const a = SessionManager.create(cwd) as unknown as Rec;
  a.appendMessage(user("first question", 1_700_000_000_000));
  a.appendMessage(assistant("an answer", 1_700_000_001_000));
  const b = SessionManager.create(cwd) as unknown as Rec;
  b.appendMessage(user("later question", 1_700_000_100_000));
  b.appendSessionInfo("named one");
  const other = join(home, "sessions", "--elsewhere--");
  mkdirSync(other, { recursive: true });
  copyFileSync(join(FIXTURES, "reference-v3-fork-parent.jsonl"), join(other, "parent.jsonl"));
  writeFileSync(join(other, "not-a-session.jsonl"), "nothing here\n");
  writeFileSync(join(home, "sessions", "pion.db"), "");
  // Older modification times for the fixture folder, so "most recent" is decided by files pion wrote.
  utimesSync(join(other, "parent.jsonl"), new Date(1_600_000_000_000), new Date(1_600_000_000_000));
});
afterAll(() => {
  for (const [k, v] of Object.entries(saved)) v === undefined ? delete process.env[k] : (process.env[k] = v);
});

const plain = (infos: Rec[]): Rec[] => infos.map((i) => ({ ...i, created: i.created.toISOString(), modified: i.modified.toISOString() }));

describe("SessionManager's finding statics", () => {
  test("list: the folder's sessions, newest first, with the reference's SessionInfo", async () => {
    const infos = plain(await SessionManager.list(cwd));
    expect(infos.map((i) => [i.name, i.messageCount, i.firstMessage, i.allMessagesText])).toEqual([
      ["named one", 1, "later question", "later question"],
      [undefined, 2, "first question", "first question an answer"],
    ]);
    expect(infos[1]!.modified).toBe(new Date(1_700_000_001_000).toISOString());
    if (reference) expect(plain(await reference.list(cwd))).toEqual(infos);
  });

  test("listAll: every folder, the non-sessions skipped", async () => {
    const all = plain(await SessionManager.listAll());
    expect(all).toHaveLength(3);
    if (reference) expect(plain(await reference.listAll())).toEqual(all);
  });

  test("findById and continueRecent", async () => {
    const [newest] = await SessionManager.list(cwd);
    expect(SessionManager.findById(cwd, newest!.id)).toBe(newest!.path);
    expect(SessionManager.findById(cwd, "nope")).toBeUndefined();
    const recent = SessionManager.continueRecent(cwd) as unknown as Rec;
    expect(recent.getSessionFile()).toBe(newest!.path);
    expect(recent.getEntries().map((e: Rec) => e.type)).toEqual(["message", "session_info"]);
    if (reference) {
      expect(reference.findById(cwd, newest!.id)).toBe(newest!.path);
      expect(reference.continueRecent(cwd).getSessionFile()).toBe(newest!.path);
    }
    // A folder with no session: a new one, not yet written.
    const empty = mkdtempSync(join(tmpdir(), "pion-statics-empty-"));
    const fresh = SessionManager.continueRecent(empty) as unknown as Rec;
    expect(fresh.getEntries()).toEqual([]);
    expect(existsSync(fresh.getSessionFile())).toBe(false);
  });

  test("forkFrom: a new file in the target folder with the source's entries; errors as the reference's", async () => {
    const source = join(FIXTURES, "reference-v3-fork-parent.jsonl");
    const target = mkdtempSync(join(tmpdir(), "pion-statics-fork-"));
    const fork = SessionManager.forkFrom(source, target) as unknown as Rec;
    const lines = readFileSync(fork.getSessionFile(), "utf8").trim().split("\n").map((l) => JSON.parse(l) as Rec);
    const sourceLines = readFileSync(source, "utf8").trim().split("\n").map((l) => JSON.parse(l) as Rec);
    expect(lines[0]).toMatchObject({ type: "session", version: 3, cwd: target, parentSession: source });
    expect(lines.slice(1)).toEqual(sourceLines.slice(1));
    expect(fork.getEntries()).toHaveLength(sourceLines.length - 1);
    const bad = join(target, "empty.jsonl");
    writeFileSync(bad, "");
    expect(() => SessionManager.forkFrom(bad, target)).toThrow(`Cannot fork: source session file is empty or invalid: ${bad}`);
    expect(() => SessionManager.forkFrom(source, target, undefined, { id: "-bad" })).toThrow("Session id must be non-empty");
    if (reference) {
      const theirs = reference.forkFrom(source, target);
      const theirLines = readFileSync(theirs.getSessionFile(), "utf8").trim().split("\n").map((l) => JSON.parse(l) as Rec);
      const { id: _a, timestamp: _b, ...theirHeader } = theirLines[0]!;
      const { id: _c, timestamp: _d, ...myHeader } = lines[0]!;
      expect(myHeader).toEqual(theirHeader);
      expect(lines.slice(1)).toEqual(theirLines.slice(1));
      expect(() => reference!.forkFrom(bad, target)).toThrow("Cannot fork: source session file is empty or invalid");
    }
  });
});
