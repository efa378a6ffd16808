/**
 * Published pi packages (test/support/published-packages.ts: pinned, installed by npm into a
 * cache outside the repo) loaded by the compiled binary from their npm folders, as `-e <package
 * folder>`, in RPC mode against the fake provider: each loads without an extension_error (its
 * own npm dependencies resolve from its node_modules) and one of its commands or tools does what
 * it does in the reference. Needs dist/pion (`bun run build`); skipped offline without a cache.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { startFakeProvider, type FakeReply } from "../support/fake-provider.ts";
import { BINARY, Pion, tempDirs, writeFakeModels, type Rec } from "../support/pion.ts";
import { installPublished, packageDir } from "../support/published-packages.ts";
import { NO_REFERENCE, referenceRpc, type RpcAgent } from "../support/reference-rpc.ts";

const why = existsSync(BINARY) ? await installPublished() : "dist/pion is not built (bun run build)";
const describeWith = why ? describe.skip : describe;
if (why) process.stderr.write(`published-packages: skipped: ${why}\n`);

async function withPackage(name: string, replies: FakeReply[], check: (p: Pion, fake: ReturnType<typeof startFakeProvider>, userHome: string) => Promise<void>) {
  const fake = startFakeProvider({ replies });
  const { home, cwd } = tempDirs();
  writeFakeModels(home, fake.url);
  // HOME too is a fresh folder: packages that keep files under ~ (pi-plan-mode's plans) keep them there.
  const userHome = join(dirname(home), "user-home");
  mkdirSync(userHome);
  const p = new Pion({ home, cwd, binary: true, env: { HOME: userHome }, args: ["--mode", "rpc", "--model", "fake/fake-model", "-e", packageDir(name)] });
  try {
    const commands = (await p.request({ type: "get_commands" })).data.commands as Rec[];
    expect(commands.length).toBeGreaterThan(0);
    await check(p, fake, userHome);
    expect(p.records.filter((r) => r.type === "extension_error")).toEqual([]);
  } finally {
    await p.close();
    await fake.stop();
  }
}

const CHILD_ANSWER = "The magic word is PINEAPPLE.";
/** A foreground subagent run (`async: false`: the child runs in the parent's process) of the built-in `delegate` agent. */
const subagentReplies = (): FakeReply[] => [
  { blocks: [{ type: "toolCall", name: "subagent", arguments: { agent: "delegate", task: "Say the magic word.", async: false } }] },
  { blocks: [{ type: "text", text: CHILD_ANSWER }] },
  { blocks: [{ type: "text", text: "Done." }] },
];

/**
 * What a subagent run left, as pion and the reference must both leave it: the tool result (run
 * and mission ids left out), the child's run, and its session file (beside the parent's, under
 * `<parent file without .jsonl>/<run id>/run-0/`).
 */
async function subagentRun(agent: RpcAgent) {
  const end = await agent.waitFor((r) => r.type === "tool_execution_end" && r.toolName === "subagent");
  await agent.waitFor("agent_settled");
  const parentFile = (await agent.request({ type: "get_state" })).data.sessionFile as string;
  const details = end.result.details as Rec;
  const child = details.results[0] as Rec;
  const entries = readFileSync(child.sessionFile, "utf8").trim().split("\n").map((l) => JSON.parse(l) as Rec);
  const runId = String(details.runId);
  return {
    isError: end.isError,
    text: (end.result.content as Rec[]).map((c) => c.text).join("").replace(/Mission: \S+/, "Mission: <id>"),
    mode: details.mode,
    child: { agent: child.agent, exitCode: child.exitCode, outputState: child.outputState, model: child.model, context: child.context, sessionName: child.sessionName, finalOutput: child.finalOutput, turns: child.usage.turns },
    file: relative(parentFile.replace(/\.jsonl$/, ""), child.sessionFile).replace(runId, "<run>"),
    entries: entries.map((e) => (e.type === "message" ? `message:${e.message.role}` : e.type)),
    sessionName: String(entries.find((e) => e.type === "session_info")?.name).replace(runId, "<run>"),
    answer: entries.at(-1)!.message.content,
  };
}

const notified = (p: Pion, text: string) => p.waitFor((r) => r.type === "extension_ui_request" && r.method === "notify" && String(r.message).includes(text), 0, 20_000);
const customMessage = (p: Pion, customType: string) => p.waitFor((r) => r.type === "message_end" && r.message.customType === customType, 0, 20_000);

describeWith("published pi packages in dist/pion", () => {
  test.concurrent("pi-aliases: /clear starts a new session", () =>
    withPackage("pi-aliases", [], async (p) => {
      const before = (await p.request({ type: "get_state" })).data.sessionId;
      expect(await p.request({ type: "prompt", message: "/clear" })).toMatchObject({ success: true, data: { disposition: "handled" } });
      expect((await p.request({ type: "get_state" })).data.sessionId).not.toBe(before);
    }), 60_000);

  test.concurrent("pi-mermaid: /pi-mermaid draws the last answer's diagram as text", () =>
    withPackage("pi-mermaid", [{ blocks: [{ type: "text", text: "Flow:\n```mermaid\ngraph TD\n  A[Start] --> B[Finish]\n```\n" }] }], async (p) => {
      await p.request({ type: "prompt", message: "draw" });
      await p.waitFor("agent_settled", 0, 20_000);
      await p.request({ type: "prompt", message: "/pi-mermaid" });
      const ascii = String((await customMessage(p, "pi-mermaid")).message.details.ascii);
      expect(ascii).toContain("Start");
      expect(ascii).toContain("Finish");
    }), 60_000);

  test.concurrent("pi-mcp-adapter: /mcp reports the (empty) server list", () =>
    withPackage("pi-mcp-adapter", [], async (p) => {
      await p.request({ type: "prompt", message: "/mcp" });
      await notified(p, "No MCP servers configured");
    }), 60_000);

  test.concurrent("pi-web-access: loads (linkedom, readability, turndown, unpdf from its node_modules); fetch_content is offered; /search answers", () =>
    withPackage("pi-web-access", [{ blocks: [{ type: "text", text: "ok" }] }], async (p, fake) => {
      await p.request({ type: "prompt", message: "hi" });
      await p.waitFor("agent_settled", 0, 20_000);
      const tools = (fake.requests[0]!.body as { tools?: { name: string }[] }).tools ?? [];
      expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(["web_search", "fetch_content"]));
      await p.request({ type: "prompt", message: "/search" });
      await notified(p, "No stored search results");
    }), 60_000);

  test.concurrent("pi-prompt-template-model: /prompt-tool answers", () =>
    withPackage("pi-prompt-template-model", [], async (p) => {
      await p.request({ type: "prompt", message: "/prompt-tool" });
      await notified(p, "run-prompt tool is");
    }), 60_000);

  test.concurrent("pi-subagents: loads (yaml, typebox, jiti from its node_modules) and registers its subagent tool", () =>
    withPackage("pi-subagents", [{ blocks: [{ type: "text", text: "ok" }] }], async (p, fake) => {
      await p.request({ type: "prompt", message: "hi" });
      await p.waitFor("agent_settled", 0, 20_000);
      const tools = (fake.requests[0]!.body as { tools?: { name: string }[] }).tools ?? [];
      expect(tools.map((t) => t.name)).toContain("subagent");
    }), 60_000);

  test.concurrent("pi-subagents: a foreground subagent run asks the child in an in-process session; the tool result holds its answer, its session file is written", () =>
    withPackage("pi-subagents", subagentReplies(), async (p, fake) => {
      await p.request({ type: "prompt", message: "delegate please" });
      const run = await subagentRun(p);
      expect(run).toMatchObject({ isError: false, mode: "single", child: { agent: "delegate", exitCode: 0, finalOutput: CHILD_ANSWER, model: "fake/fake-model" }, file: "<run>/run-0/session.jsonl", answer: [{ type: "text", text: CHILD_ANSWER }] });
      expect(run.text).toContain(CHILD_ANSWER);
      // The child's own request: its task, the child prompt its extension hooks put first.
      const child = fake.requests[1]!.body as { system: { text: string }[]; messages: Rec[]; tools?: { name: string }[] };
      // The built-ins pi.getAllTools() lists, as the reference's child gets them.
      expect((child.tools ?? []).map((t) => t.name).sort()).toEqual(["bash", "contact_supervisor", "edit", "find", "grep", "ls", "read", "write"]);
      expect(child.messages).toEqual([{ role: "user", content: [expect.objectContaining({ text: "Task: Say the magic word." })] }]);
      expect(child.system.map((b) => b.text).join("")).toStartWith("You are a child subagent");
      // The parent's follow-up got the result.
      expect(JSON.stringify(fake.requests[2]!.body)).toContain(CHILD_ANSWER);
    }), 60_000);

  // On its own: beside the others the reference's start (it transpiles the package) can outlast a request's wait.
  (NO_REFERENCE ? test.skip : test)("pi-subagents: the foreground run's result and child session file are the reference's", async () => {
    const run = async (which: "pion" | "reference") => {
      const fake = startFakeProvider({ replies: subagentReplies() });
      const dirs = tempDirs();
      writeFakeModels(dirs.home, fake.url);
      const userHome = join(dirname(dirs.home), "user-home");
      mkdirSync(userHome);
      const agent: RpcAgent =
        which === "pion"
          ? new Pion({ ...dirs, binary: true, env: { HOME: userHome }, args: ["--mode", "rpc", "--model", "fake/fake-model", "-e", packageDir("pi-subagents")] })
          : referenceRpc(["--mode", "rpc", "--provider", "fake", "--model", "fake-model", "-e", packageDir("pi-subagents")], dirs, {});
      try {
        await agent.request({ type: "prompt", message: "delegate please" });
        const result = await subagentRun(agent);
        return { result, errors: agent.records.filter((r) => r.type === "extension_error"), requests: fake.requests.length };
      } finally {
        await agent.close();
        await fake.stop();
      }
    };
    const [mine, theirs] = await Promise.all([run("pion"), run("reference")]);
    expect(mine).toEqual(theirs);
  }, 90_000);

  test.concurrent("pi-subagents: a background subagent run completes in its detached runner; its answer comes back as a notification", () =>
    // Whichever of the parent's follow-up and the child asks first gets the first of these.
    withPackage("pi-subagents", [{ blocks: [{ type: "toolCall", name: "subagent", arguments: { agent: "delegate", task: "Say the magic word." } }] }, ...Array.from({ length: 3 }, () => ({ blocks: [{ type: "text" as const, text: CHILD_ANSWER }] }))], async (p) => {
      await p.request({ type: "prompt", message: "delegate please" });
      const end = await p.waitFor((r) => r.type === "tool_execution_end" && r.toolName === "subagent", 0, 20_000);
      expect(end.isError).toBe(false);
      expect(JSON.stringify(end.result.content)).toContain("Async: delegate");
      const note = await customMessage(p, "subagent-notify");
      expect(String(note.message.content)).toContain(CHILD_ANSWER);
      expect(String(note.message.content)).toContain("Background task completed");
    }), 60_000);

  test.concurrent("pi-markdown-preview: loads and lists /preview", () =>
    withPackage("pi-markdown-preview", [], async (p) => {
      const names = ((await p.request({ type: "get_commands" })).data.commands as Rec[]).map((c) => c.name);
      expect(names).toContain("preview");
    }), 60_000);

  test.concurrent("pi-plan-mode: /plan writes a plan file, its rules reach the system prompt, and a write elsewhere is blocked", () =>
    withPackage("pi-plan-mode", [{ blocks: [{ type: "text", text: "Building a login page.\nOne form, one route." }] }], async (p, fake, userHome) => {
      await p.request({ type: "prompt", message: "/plan add a login page" });
      await notified(p, "Plan mode enabled");
      // Its widget summarizes the plan with a model call of its own (pi-ai's complete) first.
      await fake.waitForRequests(1, 20_000);
      expect(JSON.stringify(fake.requests[0]!.body)).toContain("add a login page");
      fake.enqueue({ blocks: [{ type: "toolCall", name: "write", arguments: { path: "/nonexistent-dir/elsewhere.txt", content: "x" } }] }, { blocks: [{ type: "text", text: "ok" }] });
      await p.request({ type: "prompt", message: "write it" });
      await p.waitFor("agent_settled", 0, 20_000);
      expect(JSON.stringify(fake.requests[1]!.body)).toContain("PLAN MODE ACTIVE");
      const end = p.records.find((r) => r.type === "tool_execution_end" && r.toolName === "write")!;
      expect(end.isError).toBe(true);
      expect(JSON.stringify(end.result)).toContain("Plan mode active");
      const plans = join(userHome, ".pi", "agent", "sessions", "plans");
      expect(readdirSync(plans).length).toBe(1);
    }), 60_000);

  test.concurrent("pi-btw: /btw:tangent --save asks its side question in an in-process session and saves the answer as a note", () =>
    withPackage("pi-btw", [{ blocks: [{ type: "text", text: "It is four." }] }], async (p, fake) => {
      await p.request({ type: "prompt", message: "/btw:tangent --save what is 2+2?" });
      const note = await customMessage(p, "btw-note");
      expect(JSON.stringify(note.message.content)).toContain("It is four.");
      expect(note.message.details).toMatchObject({ question: "what is 2+2?", answer: "It is four.", provider: "fake" });
      // The side question went out on its own, not as the main session's turn.
      expect(JSON.stringify(fake.requests[0]!.body)).toContain("what is 2+2?");
      expect(p.records.some((r) => r.type === "agent_start")).toBe(false);
    }), 60_000);

  test.concurrent("@baochunli/pi-collaborating-agents: loads and reports its status", () =>
    withPackage("@baochunli/pi-collaborating-agents", [], async (p) => {
      await p.waitFor((r) => r.type === "extension_ui_request" && r.method === "setStatus" && r.statusKey === "collab", 0, 20_000);
    }), 60_000);
});
