import { expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { loadExtensions } from "../../../src/extensions/loader.ts";
import { jsonLines } from "../../../src/rpc/jsonl.ts";
import type { ToolResult } from "../../../src/tools/tool.ts";
import { SOURCE_ENTRY, tempDirs } from "../../support/pion.ts";
import { describeWith } from "../../support/requires.ts";
import { fakePort } from "./fake-port.ts";

/**
 * The reference's own examples, loaded unchanged from its installed package (never copied
 * here). PION_REFERENCE_PKG is the package's folder; .ci/run installs it outside the repo.
 */
const REFERENCE = process.env.PION_REFERENCE_PKG;
const EXAMPLES = join(REFERENCE ?? "", "examples/extensions");
const RPC_DEMO = `${EXAMPLES}/rpc-demo.ts`;
const MISSING = !REFERENCE
  ? "PION_REFERENCE_PKG (the folder of @earendil-works/pi-coding-agent) is not set"
  : existsSync(RPC_DEMO)
    ? undefined
    : `${RPC_DEMO} does not exist`;
const isRequest = (method: string) => (f: Record<string, unknown>) => f.type === "extension_ui_request" && f.method === method;

describeWith("reference rpc-demo.ts", MISSING, () => {
  async function load() {
    const fake = fakePort();
    const runner = await loadExtensions([RPC_DEMO], fake.port);
    return { ...fake, runner };
  }

  test("loads without errors and registers its three commands", async () => {
    const { runner, errors } = await load();
    expect(errors()).toEqual([]);
    expect(runner.loaded).toEqual([{ path: RPC_DEMO }]);
    expect(runner.commands().map((c) => c.name)).toEqual(["rpc-input", "rpc-editor", "rpc-prefill"]);
  });

  test("session_start sets title, widget and status; turns update the status", async () => {
    const { runner, frames } = await load();
    await runner.notify("session_start", { reason: "startup" });
    await runner.notify("turn_start", { turnIndex: 0 });
    await runner.notify("turn_end", { turnIndex: 0 });
    expect(frames.map(({ id: _id, ...f }) => f)).toEqual([
      { type: "extension_ui_request", method: "setTitle", title: "pi RPC Demo" },
      { type: "extension_ui_request", method: "setWidget", widgetKey: "rpc-demo", widgetLines: ["--- RPC Extension UI Demo ---", "Loaded and ready."] },
      { type: "extension_ui_request", method: "setStatus", statusKey: "rpc-demo", statusText: "Turns: 0" },
      { type: "extension_ui_request", method: "setStatus", statusKey: "rpc-demo", statusText: "Turn 1 running..." },
      { type: "extension_ui_request", method: "setStatus", statusKey: "rpc-demo", statusText: "Turn 1 done" },
    ]);
  });

  test("a dangerous bash call asks with select; Block blocks, Allow lets it through", async () => {
    const { runner, nextFrame } = await load();
    const call = { toolCallId: "c1", toolName: "bash", input: { command: "sudo rm -rf /tmp/x" } };
    let ask = nextFrame(isRequest("select"));
    let decision = runner.onToolCall(call);
    let frame = await ask;
    expect(frame).toMatchObject({ title: "Dangerous command: sudo rm -rf /tmp/x", options: ["Allow", "Block"] });
    let note = nextFrame(isRequest("notify"));
    runner.handleUiResponse({ id: String(frame.id), value: "Block" });
    expect(await decision).toEqual({ block: true, reason: "Blocked by user" });
    expect(await note).toMatchObject({ message: "Command blocked by user", notifyType: "warning" });

    ask = nextFrame(isRequest("select"));
    decision = runner.onToolCall(call);
    frame = await ask;
    runner.handleUiResponse({ id: String(frame.id), value: "Allow" });
    expect(await decision).toEqual({ block: false, input: call.input });
    expect(await runner.onToolCall({ toolCallId: "c2", toolName: "bash", input: { command: "ls" } })).toEqual({ block: false, input: { command: "ls" } });
  });

  test("a new session asks for confirmation and cancels when declined", async () => {
    const { runner, nextFrame } = await load();
    const ask = nextFrame(isRequest("confirm"));
    const cancelled = runner.beforeSessionChange("session_before_switch", { reason: "new" });
    const frame = await ask;
    expect(frame).toMatchObject({ title: "Clear session?", message: "All messages will be lost." });
    runner.handleUiResponse({ id: String(frame.id), confirmed: false });
    expect(await cancelled).toBe(true);
    expect(await runner.beforeSessionChange("session_before_switch", { reason: "resume" })).toBe(false);
  });

  test("its commands drive input, editor and set_editor_text", async () => {
    const { runner, nextFrame } = await load();
    const ask = nextFrame(isRequest("input"));
    const done = runner.runCommand("/rpc-input");
    const frame = await ask;
    expect(frame).toMatchObject({ title: "Enter a value", placeholder: "type something..." });
    const note = nextFrame(isRequest("notify"));
    runner.handleUiResponse({ id: String(frame.id), value: "forty-two" });
    expect(await done).toBe(true);
    expect(await note).toMatchObject({ message: "You entered: forty-two", notifyType: "info" });

    const edit = nextFrame(isRequest("editor"));
    const editing = runner.runCommand("/rpc-editor");
    const editorFrame = await edit;
    expect(editorFrame).toMatchObject({ prefill: "Line 1\nLine 2\nLine 3" });
    runner.handleUiResponse({ id: String(editorFrame.id), cancelled: true });
    await editing;

    const prefill = nextFrame(isRequest("set_editor_text"));
    await runner.runCommand("/rpc-prefill");
    expect(await prefill).toMatchObject({ text: "This text was set by the rpc-demo extension." });
  });
});

describeWith("other reference examples", MISSING, () => {
  const toolCtx = { signal: new AbortController().signal, callId: "call_9", cwd: "/" };

  test("hello.ts (defineTool + Type from pi-ai) registers a working tool", async () => {
    const { port, errors } = fakePort();
    const runner = await loadExtensions([`${EXAMPLES}/hello.ts`], port);
    expect(errors()).toEqual([]);
    const hello = runner.tools()[0]!;
    expect(hello.parameters).toEqual({ type: "object", properties: { name: { type: "string", description: "Name to greet" } }, required: ["name"] });
    const result: ToolResult = await hello.execute(await hello.parse({ name: "pion" }), toolCtx);
    expect(result).toEqual({ content: [{ type: "text", text: "Hello, pion!" }], details: { greeted: "pion" } });
  });

  test("dynamic-tools.ts (Type from typebox) registers tools on session_start and from its command", async () => {
    const { port, errors, frames } = fakePort();
    const runner = await loadExtensions([`${EXAMPLES}/dynamic-tools.ts`], port);
    expect(runner.tools()).toEqual([]);
    await runner.notify("session_start", { reason: "startup" });
    await runner.runCommand("/add-echo-tool shout");
    expect(errors()).toEqual([]);
    expect(runner.tools().map((t) => t.name)).toEqual(["echo_session", "shout"]);
    const shout = runner.tools()[1]!;
    expect(await shout.execute(await shout.parse({ message: "hi" }), toolCtx)).toMatchObject({ content: [{ type: "text", text: "[shout] hi" }] });
    expect(frames.map((f) => f.message)).toEqual(["Registered dynamic tool: echo_session", "Registered dynamic tool: shout"]);
  });

  test("permission-gate.ts blocks without asking when there is no UI", async () => {
    const { port } = fakePort({ mode: "print", hasUI: false });
    const runner = await loadExtensions([`${EXAMPLES}/permission-gate.ts`], port);
    expect(await runner.onToolCall({ toolCallId: "c", toolName: "bash", input: { command: "sudo ls" } })).toEqual({
      block: true,
      reason: "Dangerous command blocked (no UI for confirmation)",
    });
  });

  test("commands.ts lists commands through pi.getCommands in a select dialog", async () => {
    const { port, nextFrame } = fakePort();
    const runner = await loadExtensions([`${EXAMPLES}/commands.ts`, RPC_DEMO], port);
    const ask = nextFrame((f) => f.method === "select");
    const done = runner.runCommand("/commands extension");
    const frame = await ask;
    expect(frame.options).toEqual([
      "--- Extensions ---",
      "/commands - List available slash commands",
      "/rpc-input - Prompt for text input (demonstrates ctx.ui.input in RPC)",
      "/rpc-editor - Open multi-line editor (demonstrates ctx.ui.editor in RPC)",
      "/rpc-prefill - Prefill the input editor (demonstrates ctx.ui.setEditorText in RPC)",
    ]);
    runner.handleUiResponse({ id: String(frame.id), cancelled: true });
    expect(await done).toBe(true);
  });
});

/**
 * The reference's examples that need no terminal UI: 43 of its 78. Left out are those whose
 * point is drawing the terminal (custom components and dialogs, editors, overlays, games,
 * footers and headers, message/entry/tool renderers, themes, working indicators, key shortcuts
 * and autocompletion), the two that bring providers of their own (custom-provider-*: pion takes
 * providers from models.json, not pi.registerProvider) and gondolin (it needs a micro-VM
 * package that is not part of the reference's install).
 */
const TUI_FREE = [
  "auto-commit-on-exit.ts", "bash-spawn-hook.ts", "bookmark.ts", "claude-rules.ts", "commands.ts",
  "confirm-destructive.ts", "custom-compaction.ts", "dirty-repo-guard.ts", "dynamic-resources", "dynamic-tools.ts",
  "event-bus.ts", "file-trigger.ts", "git-checkpoint.ts", "git-merge-and-resolve.ts", "hello.ts",
  "inline-bash.ts", "input-transform-streaming.ts", "input-transform.ts", "jev-router.ts", "model-status.ts",
  "notify.ts", "permission-gate.ts", "pirate.ts", "project-trust.ts", "prompt-customizer.ts",
  "protected-paths.ts", "provider-payload.ts", "reload-runtime.ts", "rpc-demo.ts", "send-user-message.ts",
  "session-name.ts", "shutdown-command.ts", "ssh.ts", "status-line.ts", "structured-output.ts",
  "system-prompt-header.ts", "timed-confirm.ts", "titlebar-spinner.ts", "tool-override.ts", "trigger-compact.ts",
  "truncated-tool.ts", "widget-placement.ts", "with-deps",
];
const entryOf = (name: string) => (name.endsWith(".ts") ? join(EXAMPLES, name) : join(EXAMPLES, name, "index.ts"));

/**
 * Start an agent in RPC mode with the paths as extensions (`-e`), ask get_state, and return the
 * extension_error frames by path: whatever failed while loading or in session_start. The
 * reference exits when an extension throws while loading, and when two register the same tool
 * name: a failing one is recorded and the rest loaded again without it, a conflicting one is
 * loaded in a process of its own.
 */
async function failures(command: string[], paths: string[]): Promise<Map<string, string>> {
  const failed = new Map<string, string>();
  const batches = [[...paths]];
  for (let batch = batches.shift(); batch; batch = batches.shift()) {
    const { home, cwd } = tempDirs();
    const proc = Bun.spawn([...command, "--mode", "rpc", "--no-session", ...batch.flatMap((p) => ["-e", p])], {
      cwd,
      env: { ...process.env, PION_HOME: home, PI_CODING_AGENT_DIR: home, PI_OFFLINE: "1" },
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
    proc.stdin.write(`${JSON.stringify({ id: "s", type: "get_state" })}\n`);
    proc.stdin.flush();
    let answered = false;
    for await (const rec of jsonLines(proc.stdout)) {
      if ("error" in rec || !rec.line.startsWith("{")) continue;
      const r = JSON.parse(rec.line) as { type?: string; id?: string; extensionPath?: string; error?: string };
      if (r.type === "extension_error" && r.extensionPath) failed.set(r.extensionPath, String(r.error));
      if (r.type === "response" && r.id === "s") {
        answered = true;
        break;
      }
    }
    proc.stdin.end();
    proc.kill();
    const stderr = await new Response(proc.stderr).text();
    await proc.exited;
    if (answered) continue;
    const fatal = /Failed to load extension "([^"]+)": (.*)/.exec(stderr);
    const path = fatal?.[1];
    if (!fatal || !path || !batch.includes(path)) throw new Error(`${command.join(" ")} stopped without answering: ${stderr.slice(-2000)}`);
    const rest = batch.filter((p) => p !== path);
    if (/conflicts with/.test(fatal[2]!)) batches.push([path]);
    else failed.set(path, fatal[2]!);
    if (rest.length > 0) batches.unshift(rest);
  }
  return failed;
}

describeWith("the reference's TUI-free examples", MISSING, () => {
  test("at least 42 of the 43 load cleanly in pion, and every one that loads in the reference loads in pion", async () => {
    const paths = TUI_FREE.map(entryOf);
    expect(paths.filter((p) => !existsSync(p))).toEqual([]);
    const [inPion, inReference] = await Promise.all([failures(["bun", SOURCE_ENTRY], paths), failures(["bun", join(REFERENCE!, "dist/cli.js")], paths)]);
    const loads = (failed: Map<string, string>) => paths.filter((p) => !failed.has(p));
    process.stderr.write(
      `TUI-free examples loading cleanly: pion ${loads(inPion).length} of ${paths.length}, the reference ${loads(inReference).length}` +
        `${inPion.size ? `; pion: ${[...inPion].map(([p, e]) => `${p.slice(EXAMPLES.length + 1)}: ${e}`).join("; ")}` : ""}; ref: ${[...inReference].map(([p, e]) => `${p.slice(EXAMPLES.length + 1)}: ${e}`).join("; ")}\n`,
    );
    expect(loads(inPion).length).toBeGreaterThanOrEqual(42);
    expect(loads(inReference).filter((p) => inPion.has(p))).toEqual([]);
    // The one that may fail: file-trigger.ts watches /tmp/agent-trigger.txt, which must exist.
    expect([...inPion.keys()].filter((p) => !p.endsWith("/file-trigger.ts"))).toEqual([]);
  }, 60_000);

  test("file-trigger.ts loads; a missing trigger file is reported at session_start, as the reference does", async () => {
    const path = join(EXAMPLES, "file-trigger.ts");
    const { port, errors } = fakePort({ mode: "print", hasUI: false });
    const runner = await loadExtensions([path], port);
    expect(runner.loaded).toEqual([{ path }]);
    await runner.notify("session_start", { reason: "startup" });
    // The example's path is fixed; which case this machine is in decides the outcome.
    if (existsSync("/tmp/agent-trigger.txt")) expect(errors()).toEqual([]);
    else
      expect(errors()).toEqual([
        { type: "extension_error", extensionPath: path, event: "session_start", error: "ENOENT: no such file or directory, watch '/tmp/agent-trigger.txt'" },
      ]);
  });
});
