import { describe, expect, test } from "bun:test";
import { permissionConfig } from "../../../src/permissions/config.ts";
import { PermissionGate, type PermissionRecord } from "../../../src/permissions/gate.ts";
import { decide } from "../../../src/permissions/policy.ts";
import type { ApprovalAnswer, ApprovalPort, ApprovalRequest } from "../../../src/permissions/port.ts";
import { parseRule } from "../../../src/permissions/rules.ts";
import { subjectOf } from "../../../src/permissions/subject.ts";

const cwd = "/w";
const facts = async (toolName: string, args: Record<string, unknown>, readOnly = false) => ({ toolName, readOnly, subject: await subjectOf(toolName, args, cwd) });

describe("decide", () => {
  const rules = [
    parseRule("deny", "bash(rm *)", "settings"),
    parseRule("ask", "bash(git push*)", "settings"),
    parseRule("allow", "bash(git *)", "settings"),
    parseRule("allow", "edit(src/**)", "command line"),
  ];

  test("deny beats ask beats allow; the mode decides the rest", async () => {
    expect(decide("ask", rules, await facts("bash", { command: "git push && rm x" }), cwd)).toMatchObject({ action: "deny", by: "rule" });
    expect(decide("ask", rules, await facts("bash", { command: "git push origin" }), cwd)).toMatchObject({ action: "ask", rule: { text: "bash(git push*)" } });
    expect(decide("auto", rules, await facts("bash", { command: "git push origin" }), cwd)).toMatchObject({ action: "ask" });
    expect(decide("ask", rules, await facts("bash", { command: "git log" }), cwd)).toMatchObject({ action: "allow", by: "rule" });
    expect(decide("ask", rules, await facts("bash", { command: "make" }), cwd)).toMatchObject({ action: "ask", reason: expect.stringContaining("ask mode") });
    expect(decide("auto", rules, await facts("bash", { command: "make" }), cwd)).toEqual({ action: "allow", by: "mode" });
    expect(decide("ask", rules, await facts("edit", { path: "src/a.ts" }), cwd)).toMatchObject({ action: "allow", by: "rule" });
    expect(decide("ask", rules, await facts("read", { path: "x" }, true), cwd)).toEqual({ action: "allow", by: "mode" });
  });

  test("read-only mode refuses what is not read-only, allow rules notwithstanding", async () => {
    expect(decide("read-only", rules, await facts("bash", { command: "git log" }), cwd)).toMatchObject({ action: "deny", by: "mode" });
    expect(decide("read-only", rules, await facts("mcp__gh__list", {}, true), cwd)).toEqual({ action: "allow", by: "mode" });
    expect(decide("read-only", [parseRule("deny", "read(/w/.env)", "settings")], await facts("read", { path: ".env" }, true), cwd)).toMatchObject({ action: "deny", by: "rule" });
  });
});

describe("permissionConfig", () => {
  test("the command line's mode wins; rules keep their source", () => {
    const c = permissionConfig({ mode: "ask", allow: ["read"], deny: ["bash(rm *)"], timeoutMs: 10 }, ["write"], { mode: "read-only", allow: ["ls"], deny: ["edit"] });
    expect(c.mode).toBe("read-only");
    expect(c.timeoutMs).toBe(10);
    expect(c.rules.map((r) => [r.kind, r.text, r.source])).toEqual([
      ["deny", "bash(rm *)", "settings"],
      ["allow", "read", "settings"],
      ["deny", "write", "project settings"],
      ["deny", "edit", "command line"],
      ["allow", "ls", "command line"],
    ]);
    expect(permissionConfig(undefined, undefined, {}).mode).toBe("auto");
    expect(() => permissionConfig({ ask: ["bash("] }, undefined, {})).toThrow('Invalid permission rule "bash("');
  });
});

type Asked = { req: ApprovalRequest; answer: (a: ApprovalAnswer) => void; signal: AbortSignal };

/** A port whose requests the test answers by hand; `nth(n)` resolves once the n-th request (from 1) arrived. */
function manualPort() {
  const asked: Asked[] = [];
  const waiting: { n: number; resolve: (a: Asked) => void }[] = [];
  const port: ApprovalPort = {
    request: (req, signal) =>
      new Promise((resolve) => {
        signal.addEventListener("abort", () => resolve(undefined), { once: true });
        asked.push({ req, answer: resolve, signal });
        for (const w of waiting.filter((w) => w.n === asked.length)) w.resolve(asked[w.n - 1]!);
      }),
  };
  const nth = (n: number) => (asked.length >= n ? Promise.resolve(asked[n - 1]!) : new Promise<Asked>((resolve) => waiting.push({ n, resolve })));
  return { port, asked, nth };
}

function gateWith(mode: "auto" | "ask" | "read-only", granted: string[] = [], timeoutMs?: number) {
  const records: PermissionRecord[] = [];
  let sessionId = "s1";
  const gate = new PermissionGate(
    { mode, rules: [], ...(timeoutMs !== undefined ? { timeoutMs } : {}) },
    { cwd, sessionId: () => sessionId, grantedRules: () => granted, record: (e) => void records.push(e) },
  );
  return { gate, records, switchTo: (id: string) => (sessionId = id) };
}

const call = (id: string, command: string) => [{ id, name: "bash" }, { command }, {}] as const;

describe("PermissionGate", () => {
  test("allow_always adds exact rules for the session; a new session starts without them", async () => {
    const { gate, records, switchTo } = gateWith("ask");
    const { port, asked, nth } = manualPort();
    gate.port = port;
    const first = gate.check(...call("c1", "npm test"), new AbortController().signal);
    await nth(1);
    expect(asked[0]!.req).toEqual({ toolCallId: "c1", toolName: "bash", args: { command: "npm test" }, reason: expect.stringContaining("ask mode"), options: ["allow", "allow_always", "deny"] });
    asked[0]!.answer({ by: "host", decision: "allow_always" });
    expect(await first).toEqual({ allow: true });
    expect(records[0]).toMatchObject({ decision: "allow", by: "host", addedRules: ["bash(npm test)"] });
    expect(await gate.check(...call("c2", "npm test"), new AbortController().signal)).toEqual({ allow: true });
    expect(asked.length).toBe(1);
    switchTo("s2");
    void gate.check(...call("c3", "npm test"), new AbortController().signal);
    expect((await nth(2)).req.toolCallId).toBe("c3");
  });

  test("rules the host granted earlier count after a reopen; unreadable ones grant nothing", async () => {
    const { gate } = gateWith("ask", ["bash(make)", "bash("]);
    expect(await gate.check(...call("c1", "make"), new AbortController().signal)).toEqual({ allow: true });
  });

  test("a timeout or an abort denies and says which; an unavailable port says why", async () => {
    const timed = gateWith("ask", [], 5);
    timed.gate.port = manualPort().port;
    expect(await timed.gate.check(...call("t", "x"), new AbortController().signal)).toEqual({ allow: false, reason: "Tool call denied: no approval arrived within 5 ms. Nothing ran." });
    expect(timed.records[0]).toMatchObject({ by: "timeout", decision: "deny" });

    const aborted = gateWith("ask");
    const { port, nth } = manualPort();
    aborted.gate.port = port;
    const ctl = new AbortController();
    const pending = aborted.gate.check(...call("a", "x"), ctl.signal);
    const req = await nth(1);
    ctl.abort();
    expect(req.signal.aborted).toBe(true);
    expect(await pending).toMatchObject({ allow: false, reason: expect.stringContaining("aborted") });
    expect(aborted.records[0]).toMatchObject({ by: "abort" });

    const nobody = gateWith("ask");
    const r = await nobody.gate.check(...call("n", "x"), new AbortController().signal);
    expect(r).toMatchObject({ allow: false, reason: expect.stringContaining("approval is unavailable") });
    expect(nobody.records[0]).toMatchObject({ by: "unavailable" });
  });

  test("auto mode without rules records nothing; read-only tools in ask mode run unrecorded", async () => {
    const auto = gateWith("auto");
    expect(await auto.gate.check(...call("x", "rm -rf /nope"), new AbortController().signal)).toEqual({ allow: true });
    const ask = gateWith("ask");
    expect(await ask.gate.check({ id: "r", name: "read" }, { path: "a" }, { annotations: { readOnlyHint: true } }, new AbortController().signal)).toEqual({ allow: true, checkedPath: "/w/a" });
    expect([...auto.records, ...ask.records]).toEqual([]);
  });
});
