/**
 * The reference's SessionManager writing its session files (surface/session-manager.ts): the same
 * script run on pion's and on the reference's (PION_REFERENCE_PKG) leaves the same files, and
 * each reads the other's.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { referenceModules } from "../../../src/extensions/surface/modules.ts";

type Rec = Record<string, any>;
const REF = process.env.PION_REFERENCE_PKG;
const ca = referenceModules()["pi-coding-agent"] as Rec;
const ref = REF ? ((await import(`${REF}/dist/index.js`)) as Rec) : undefined;

const user = (text: string) => ({ role: "user", content: text, timestamp: 1 });
const assistant = (text: string) => ({ role: "assistant", content: [{ type: "text", text }], stopReason: "stop", timestamp: 2 });
/** A file's JSON lines (a torn one, left in place by both, skipped as both readers skip it). */
const lines = (file: string): Rec[] =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .flatMap((l) => {
      try {
        return [JSON.parse(l)];
      } catch {
        return [];
      }
    });

/** A file's lines without ids and times: each entry's parent as the index of its line. */
function shape(file: string): Rec[] {
  const all = lines(file);
  const at = new Map(all.map((e, i) => [e.id, i]));
  return all.map(({ id: _id, timestamp: _t, parentId, targetId, ...rest }) => ({
    ...rest,
    ...(rest.type === "session" ? { id: "<id>", timestamp: "<t>", ...(rest.parentSession ? { parentSession: basename(dirname(rest.parentSession)) } : {}) } : { parent: parentId === null ? null : at.get(parentId) }),
    ...(targetId ? { target: at.get(targetId) } : {}),
  }));
}

/** What one SessionManager class does to files, as plain data. */
function sessionFiles(SM: Rec): Rec {
  const root = mkdtempSync(join(tmpdir(), "pion-sm-files-"));
  const dir = join(root, "sessions");
  const out: Rec = {};
  const sm = SM.create("/w", dir);
  sm.appendModelChange("fake", "m");
  sm.appendThinkingLevelChange("off");
  out.setupOnly = [existsSync(dir) ? readdirSync(dir) : "no folder", sm.isPersisted(), sm.getSessionDir() === dir];
  const u = sm.appendMessage(user("hi"));
  sm.appendMessage(assistant("yo"));
  sm.appendSessionInfo(" the\nname ");
  sm.appendLabelChange(u, "start");
  const file = sm.getSessionFile();
  out.file = [dirname(file) === dir, basename(file) === `${lines(file)[0]!.timestamp.replace(/[:.]/g, "-")}_${sm.getSessionId()}.jsonl`, sm.getSessionName()];
  out.written = shape(file);
  const back = SM.open(file);
  out.opened = [back.getSessionId() === sm.getSessionId(), back.getCwd(), back.getSessionDir() === dir, back.getEntries().length, back.getLeafId() === sm.getLeafId(), back.getLabel(u)];
  back.appendCustomEntry("note", { n: 1 });
  out.appended = shape(file).at(-1);
  const branched = back.createBranchedSession(u);
  out.branched = [dirname(branched) === dir, branched === back.getSessionFile(), existsSync(branched), back.getHeader().parentSession === file, shape(branched)];
  const fresh = back.newSession({ parentSession: file });
  out.fresh = [dirname(fresh) === dir, existsSync(fresh), back.getEntries().length, back.getHeader().parentSession === file];
  // A missing file is a new session there, written with its first conversation entry.
  const missing = join(root, "sub", "new.jsonl");
  mkdirSync(dirname(missing));
  const started = SM.open(missing, undefined, "/other");
  started.appendModelChange("fake", "m");
  out.missing = [started.getCwd(), started.getHeader().cwd, started.getSessionFile() === missing, started.getSessionDir() === dirname(missing), existsSync(missing)];
  started.appendMessage(user("first"));
  out.missingWritten = shape(missing);
  // An empty file gets its header at once; a torn last line is skipped and ended before the next entry.
  const empty = join(root, "empty.jsonl");
  writeFileSync(empty, "");
  SM.open(empty);
  out.empty = shape(empty);
  const torn = join(root, "torn.jsonl");
  writeFileSync(torn, readFileSync(file, "utf8") + '{"type":"message","id":"cut');
  const tornManager = SM.open(torn);
  out.tornRead = tornManager.getEntries().length;
  tornManager.appendMessage(user("after"));
  out.torn = [readFileSync(torn, "utf8").split("\n").length, shape(torn).slice(-1)];
  // A v2 file is migrated to v3 and written back.
  const v2 = join(root, "v2.jsonl");
  writeFileSync(
    v2,
    [
      { type: "session", version: 2, id: "old", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" },
      { type: "message", id: "a1", parentId: null, timestamp: "2026-01-01T00:00:01.000Z", message: { role: "hookMessage", customType: "x", content: "c", display: true, timestamp: 1 } },
    ]
      .map((l) => JSON.stringify(l))
      .join("\n") + "\n",
  );
  const migrated = SM.open(v2);
  out.v2 = [migrated.getEntries().map((e: Rec) => e.message?.role), lines(v2)];
  return out;
}

describe("SessionManager's session files", () => {
  test("created lazily in the session folder, appended to, branched and started anew as files; missing, empty, torn and old files", () => {
    const out = sessionFiles(ca.SessionManager);
    expect(out.setupOnly).toEqual([[], true, true]);
    expect(out.file).toEqual([true, true, "the name"]);
    expect(out.written.map((e: Rec) => e.type)).toEqual(["session", "model_change", "thinking_level_change", "message", "message", "session_info", "label"]);
    expect(out.opened).toEqual([true, "/w", true, 6, true, "start"]);
    expect(out.appended).toEqual({ type: "custom", customType: "note", data: { n: 1 }, parent: 6 });
    expect(out.branched.slice(0, 4)).toEqual([true, true, true, true]);
    expect(out.fresh).toEqual([true, false, 0, true]);
    expect(out.missing).toEqual(["/other", "/other", true, true, false]);
    expect(out.missingWritten.map((e: Rec) => e.type)).toEqual(["session", "model_change", "message"]);
    expect(out.empty).toEqual([expect.objectContaining({ type: "session", version: 3 })]);
    expect(out.tornRead).toBe(7);
    expect(out.v2[0]).toEqual(["custom"]);
    expect(out.v2[1][0].version).toBe(3);
  });

  (ref ? test : test.skip)("the same files as the reference's SessionManager leaves", () => {
    expect(sessionFiles(ca.SessionManager)).toEqual(sessionFiles(ref!.SessionManager));
  });

  (ref ? test : test.skip)("each reads the files the other writes", () => {
    const root = mkdtempSync(join(tmpdir(), "pion-sm-cross-"));
    const write = (SM: Rec, dir: string) => {
      const sm = SM.create("/w", dir);
      sm.appendModelChange("fake", "m");
      const u = sm.appendMessage(user("hi"));
      sm.appendMessage(assistant("yo"));
      sm.branch(u);
      sm.appendMessage(assistant("other"));
      return sm.getSessionFile() as string;
    };
    const view = (sm: Rec) => ({ id: sm.getSessionId(), header: sm.getHeader(), entries: sm.getEntries(), leaf: sm.getLeafId(), branch: sm.getBranch().map((e: Rec) => e.id), tree: JSON.stringify(sm.getTree()) });
    const mine = write(ca.SessionManager, join(root, "pion"));
    const theirs = write(ref!.SessionManager, join(root, "ref"));
    expect(view(ref!.SessionManager.open(mine))).toEqual(view(ca.SessionManager.open(mine)));
    expect(view(ca.SessionManager.open(theirs))).toEqual(view(ref!.SessionManager.open(theirs)));
  });
});
