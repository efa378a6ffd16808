/**
 * Extensions bound to an in-process AgentSession (surface/agent-session-extensions.ts), as
 * pi-subagents binds them to its children (test/support/bound-session-run.ts): on pion's modules,
 * and, with PION_REFERENCE_PKG, on the reference's in a process of its own, against the fake
 * provider; both must see the same.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { startFakeProvider } from "../../support/fake-provider.ts";
import { boundSessionRun } from "../../support/bound-session-run.ts";
import { referenceModules } from "../../../src/extensions/surface/modules.ts";

type Rec = Record<string, any>;
const REF = process.env.PION_REFERENCE_PKG;
const ca = referenceModules()["pi-coding-agent"] as Rec;
const fake = startFakeProvider();
afterAll(() => fake.stop());

/** The run and the requests its session sent (the prompt each carried, the tools the first declared). */
async function withRequests(run: () => Promise<Rec>): Promise<Rec> {
  fake.enqueue({ blocks: [{ type: "toolCall", name: "echo", arguments: { text: "hi" } }] }, { blocks: [{ type: "text", text: "done" }] });
  const from = fake.requests.length;
  const out = await run();
  const requests = fake.requests.slice(from).map((r) => r.body as Rec);
  return { ...out, system: requests.map((r) => (r.system ?? []).map((b: Rec) => b.text).join("")), sentTools: (requests[0]?.tools ?? []).map((t: Rec) => t.name), metadata: requests.map((r) => r.metadata) };
}

const onPion = () => withRequests(() => boundSessionRun(ca, fake.url));
const onReference = () =>
  withRequests(async () => {
    const proc = Bun.spawn(["bun", join(import.meta.dir, "../../support/bound-session-run.ts"), REF!, fake.url], { stdout: "pipe", stderr: "inherit" });
    const [text, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
    if (code !== 0) throw new Error(`the reference's run exited ${code}`);
    return JSON.parse(text) as Rec;
  });

describe("extensions bound to an in-process session", () => {
  test("their tools, hooks and events (the provider's too); the forced prompt; pi.setSessionName; session_shutdown through extensionRunner", async () => {
    const run = await onPion();
    expect(run.errors).toEqual([]);
    expect(run.tools).toEqual({ before: ["read", "echo"], bound: ["read", "echo"] });
    expect(run.log).toEqual([
      "session_start:startup:false:string",
      "before_agent_start:go",
      "agent_start",
      "turn_start",
      "message_end:system",
      "message_end:user",
      "context:1",
      "before_provider_request:string",
      "after_provider_response:200:object",
      "message_end:assistant",
      "tool_execution_start",
      'tool_call:echo:{"text":"hi"}',
      "tool_result:echo:echo:changed:string",
      "tool_execution_end",
      "message_end:toolResult",
      "turn_end",
      "turn_start",
      "context:3",
      "before_provider_request:string",
      "after_provider_response:200:object",
      "message_end:assistant",
      "turn_end",
      "agent_end",
      "agent_settled",
      "session_shutdown:quit",
    ]);
    expect([run.handles, run.name]).toEqual([true, "child"]);
    // The prompt a before_agent_start handler returned is the run's, on every request.
    expect(run.system).toEqual(["FORCED go", "FORCED go"]);
    expect(run.sentTools).toEqual(["read", "echo"]);
    // The payload a before_provider_request handler returned is the one sent.
    expect(run.metadata).toEqual([{ user_id: "bound-session" }, { user_id: "bound-session" }]);
    expect(run.result).toEqual([{ type: "text", text: "echo:changed:string!" }]);
    expect(run.roles).toEqual(["user", "assistant", "toolResult", "assistant"]);
    expect(run.entries).toEqual(["model_change", "thinking_level_change", "session_info", "message:user", "message:assistant", "message:toolResult", "message:assistant"]);
  });

  (REF ? test : test.skip)("the same as the reference's session does", async () => {
    const mine = await onPion();
    const theirs = await onReference();
    expect(mine).toEqual(theirs);
  }, 30_000);
});
