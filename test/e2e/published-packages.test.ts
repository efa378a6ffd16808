/**
 * Published pi packages (test/support/published-packages.ts: pinned, installed by npm into a
 * cache outside the repo) loaded by the compiled binary from their npm folders, as `-e <package
 * folder>`, in RPC mode against the fake provider: each loads without an extension_error (its
 * own npm dependencies resolve from its node_modules) and one of its commands or tools does what
 * it does in the reference. Needs dist/pion (`bun run build`); skipped offline without a cache.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { startFakeProvider, type FakeReply } from "../support/fake-provider.ts";
import { BINARY, Pion, tempDirs, writeFakeModels, type Rec } from "../support/pion.ts";
import { installPublished, packageDir } from "../support/published-packages.ts";

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
