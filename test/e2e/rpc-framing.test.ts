import { describe, expect, test } from "bun:test";
import { Pion } from "../support/pion.ts";

/** Wait until `n` responses have arrived. */
async function responses(p: Pion, n: number) {
  await p.waitFor(() => p.records.filter((r) => r.type === "response").length >= n);
  return p.records.filter((r) => r.type === "response");
}

describe("rpc framing and validation", () => {
  test.concurrent("bad records each get one error response and the process keeps serving", async () => {
    const p = new Pion();
    p.write(
      [
        "not json",
        "[]",
        "42",
        '{"id":"x"}',
        '{"type":"nope","id":"u1"}',
        '{"type":"set_steering_mode","mode":"sometimes","id":"s1"}',
        '{"type":"prompt","id":"p0"}',
        '{"type":"prompt","message":5,"id":"p1"}',
        '{"type":"set_session_name","name":"  ","id":"n1"}',
        "",
        "   ",
        '{"type":"get_state","id":"ok"}',
      ].join("\n") + "\n",
    );
    const rs = await responses(p, 10);
    expect(rs.length).toBe(10);
    expect(rs[0]).toEqual({ type: "response", command: "parse", success: false, error: expect.stringContaining("Failed to parse command:") });
    expect(rs[1]).toEqual({ type: "response", success: false, error: "Unknown command: undefined" });
    expect(rs[2]).toEqual({ type: "response", success: false, error: "Unknown command: undefined" });
    expect(rs[3]).toEqual({ id: "x", type: "response", success: false, error: "Unknown command: undefined" });
    expect(rs[4]).toEqual({ id: "u1", type: "response", command: "nope", success: false, error: "Unknown command: nope" });
    expect(rs[5]).toMatchObject({ id: "s1", command: "set_steering_mode", success: false });
    expect(rs[5]!.error).toContain("mode");
    expect(rs[5]!.error).toContain("one-at-a-time");
    expect(rs[6]).toMatchObject({ id: "p0", command: "prompt", success: false, error: expect.stringContaining("message") });
    expect(rs[7]).toMatchObject({ id: "p1", command: "prompt", success: false, error: expect.stringContaining("message") });
    expect(rs[8]).toMatchObject({ id: "n1", command: "set_session_name", success: false, error: "Session name cannot be empty" });
    expect(rs[9]).toMatchObject({ id: "ok", command: "get_state", success: true });
    expect(await p.close()).toBe(0);
  });

  test.concurrent("CRLF, U+2028 and a record split across writes inside a UTF-8 character", async () => {
    const p = new Pion();
    p.write('{"type":"get_state","id":"crlf"}\r\n');
    const name = "wörk\u2028€";
    const bytes = new TextEncoder().encode(`${JSON.stringify({ type: "set_session_name", name, id: "n" })}\n`);
    const cut = bytes.indexOf(0xe2) + 1;
    p.write(bytes.subarray(0, cut));
    await Bun.sleep(20); // let the first half arrive as its own chunk
    p.write(bytes.subarray(cut));
    p.write('{"type":"get_state","id":"last"}'); // no trailing LF
    const last = p.waitFor((r) => r.id === "last");
    await p.close();
    expect((await p.waitFor((r) => r.id === "crlf")).success).toBe(true);
    expect(await p.waitFor((r) => r.id === "n")).toMatchObject({ success: true });
    expect((await last).data.sessionName).toBe(name);
  });

  test.concurrent("invalid UTF-8 and blank lines", async () => {
    const p = new Pion();
    p.write(new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x7d, 0x0a]));
    p.write("\n\r\n");
    p.write('{"type":"get_state","id":"after"}\n');
    await p.waitFor((r) => r.id === "after");
    await p.close();
    const rs = p.records.filter((r) => r.type === "response");
    expect(rs.length).toBe(2);
    expect(rs[0]).toEqual({ type: "response", command: "parse", success: false, error: "Failed to parse command: invalid UTF-8 in input line" });
  });

  test.concurrent("get_state fields, and commands apply in order", async () => {
    const p = new Pion({ args: ["--mode", "rpc", "--name", "start-name"] });
    p.send({ type: "set_steering_mode", mode: "all", id: "1" });
    p.send({ type: "set_follow_up_mode", mode: "all", id: "2" });
    p.send({ type: "set_interrupt_mode", mode: "immediate", id: "3" });
    p.send({ type: "set_auto_compaction", enabled: false, id: "4" });
    p.send({ type: "get_state", id: "5" });
    const st = await p.waitFor((r) => r.id === "5");
    expect(p.records.filter((r) => r.type === "response").map((r) => r.id)).toEqual(["1", "2", "3", "4", "5"]);
    expect(st.data).toEqual({
      model: null,
      thinkingLevel: "off",
      isStreaming: false,
      isCompacting: false,
      steeringMode: "all",
      followUpMode: "all",
      sessionFile: expect.stringMatching(/\.jsonl$/),
      sessionId: expect.any(String),
      sessionName: "start-name",
      autoCompactionEnabled: false,
      messageCount: 0,
      pendingMessageCount: 0,
      queuedMessageCount: 0,
      interruptMode: "immediate",
      todoPhases: [],
      projectTrust: "none",
      permissionMode: "auto",
      sandboxMode: "off",
      sandboxNetwork: true,
    });
    await p.close();
  });

  test.concurrent("a 10 MB line gets an answer and the process keeps serving", async () => {
    const p = new Pion();
    p.write(`{"type":"prompt","message":5,"pad":"${"x".repeat(10_000_000)}","id":"big"}\n`);
    const big = await p.waitFor((r) => r.id === "big");
    expect(big.success).toBe(false);
    expect((await p.request({ type: "get_state" })).success).toBe(true);
    await p.close();
  });
});
