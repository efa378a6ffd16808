/**
 * One in-process session with extensions bound, as pi-subagents binds them to its children: a
 * DefaultResourceLoader with an inline factory, createAgentSession, bindExtensions, a prompt with
 * a tool call, session_shutdown through `extensionRunner`. It runs on the pi-coding-agent module
 * it is given, against the fake provider at `fakeUrl` (two replies queued by the caller: a call of
 * `echo`, then text). Run as a script (`bun bound-session-run.ts <reference package> <fake url>`)
 * it runs on the reference and prints the outcome: in a process of its own, where pion's loader has
 * not made the reference's package names its own virtual modules.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

type Rec = Record<string, any>;

/** An extension that records what reaches it and uses the session through `pi` and `ctx`. */
function recorder(log: string[]) {
  return (pi: Rec) => {
    pi.registerTool({
      name: "echo",
      label: "Echo",
      description: "echo text",
      parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
      execute: async (_id: string, p: { text: string }, _signal: unknown, _onUpdate: unknown, ctx: Rec) => ({ content: [{ type: "text", text: `echo:${p.text}:${typeof ctx.sessionManager?.getSessionId()}` }], details: {} }),
    });
    for (const name of ["agent_start", "turn_start", "turn_end", "message_end", "tool_execution_start", "tool_execution_end", "agent_end", "agent_settled"]) {
      pi.on(name, (e: Rec) => void log.push(name === "message_end" ? `${name}:${e.message.role}` : name));
    }
    pi.on("session_start", (e: Rec, ctx: Rec) => void log.push(`session_start:${e.reason}:${ctx.hasUI}:${typeof ctx.sessionManager.getSessionId()}`));
    pi.on("before_agent_start", (e: Rec) => {
      log.push(`before_agent_start:${e.prompt}`);
      pi.setSessionName("child");
      return { systemPrompt: `FORCED ${e.prompt}` };
    });
    pi.on("context", (e: Rec) => void log.push(`context:${e.messages.filter((m: Rec) => m.role !== "system").length}`));
    pi.on("tool_call", (e: Rec) => {
      log.push(`tool_call:${e.toolName}:${JSON.stringify(e.input)}`);
      e.input.text = "changed";
    });
    pi.on("tool_result", (e: Rec) => {
      log.push(`tool_result:${e.toolName}:${e.content[0].text}`);
      return { content: [{ type: "text", text: `${e.content[0].text}!` }] };
    });
    pi.on("session_shutdown", (e: Rec) => void log.push(`session_shutdown:${e.reason}`));
    // The provider events: a returned payload is the one sent (the test reads its metadata back).
    pi.on("before_provider_request", (e: Rec) => {
      log.push(`before_provider_request:${typeof e.payload.model}`);
      return { ...e.payload, metadata: { user_id: "bound-session" } };
    });
    pi.on("after_provider_response", (e: Rec) => void log.push(`after_provider_response:${e.status}:${typeof e.headers}`));
  };
}

export async function boundSessionRun(m: Rec, fakeUrl: string): Promise<Rec> {
  const dir = mkdtempSync(join(tmpdir(), "pion-bind-"));
  const cwd = mkdtempSync(join(tmpdir(), "pion-bind-cwd-"));
  const models = { providers: { fake: { baseUrl: fakeUrl, api: "anthropic-messages", apiKey: "k", models: [{ id: "fake-plain", reasoning: false, input: ["text"], contextWindow: 100000, maxTokens: 1000 }] } } };
  writeFileSync(join(dir, "models.json"), JSON.stringify(models));
  const log: string[] = [];
  const errors: Rec[] = [];
  const modelRuntime = await m.ModelRuntime.create({ modelsPath: join(dir, "models.json"), authPath: join(dir, "auth.json") });
  const settingsManager = m.SettingsManager.inMemory({});
  const loader = new m.DefaultResourceLoader({ cwd, agentDir: dir, settingsManager, noExtensions: true, noSkills: true, noPromptTemplates: true, noThemes: true, noContextFiles: true, extensionFactories: [{ name: "rec", factory: recorder(log) }] });
  await loader.reload();
  const model = modelRuntime.getModel("fake", "fake-plain");
  const sessionManager = m.SessionManager.inMemory(cwd);
  const { session } = await m.createAgentSession({ cwd, agentDir: dir, modelRuntime, model, thinkingLevel: "off", tools: ["read", "echo"], resourceLoader: loader, sessionManager, settingsManager, sessionStartEvent: { type: "session_start", reason: "startup" } });
  const before = session.getActiveToolNames();
  await session.bindExtensions({ mode: "print", onError: (e: Rec) => errors.push(e) });
  const bound = session.getActiveToolNames();
  await session.prompt("go");
  const runner = session.extensionRunner;
  const handles = runner.hasHandlers("session_shutdown");
  await runner.emit({ type: "session_shutdown", reason: "quit" });
  session.dispose();
  return {
    log,
    errors,
    tools: { before, bound },
    handles,
    name: session.sessionName,
    result: session.messages.find((x: Rec) => x.role === "toolResult")?.content,
    roles: session.messages.filter((x: Rec) => x.role !== "system").map((x: Rec) => x.role),
    entries: sessionManager.getEntries().map((e: Rec) => (e.type === "message" ? `message:${e.message.role}` : e.type)).filter((t: string) => t !== "message:system"),
  };
}

if (import.meta.main) {
  const [reference, fakeUrl] = process.argv.slice(2);
  const m = (await import(`${reference}/dist/index.js`)) as Rec;
  process.stdout.write(JSON.stringify(await boundSessionRun(m, fakeUrl!)));
}
