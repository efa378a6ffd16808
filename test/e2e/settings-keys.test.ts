import { describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { startFakeProvider } from "../support/fake-provider.ts";
import { Pion, runPion, tempDirs, writeFakeModels, writeSettings, type Rec } from "../support/pion.ts";

/** The reference's settings keys pion honours (README: "Coming from the reference"). */

function write(path: string, text: string) {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
}

const skill = (name: string) => `---\nname: ${name}\ndescription: skill ${name}\n---\nDo ${name}.`;
type Body = { system: { text: string }[]; messages: { role: string; content: Rec[] }[]; tools?: { name: string }[] };
const systemOf = (body: unknown) => (body as Body).system.map((s) => s.text).join("\n");

describe("settings keys from the reference", () => {
  test.concurrent("enabledModels picks the start-up model and scopes cycle_model; modelThinkingLevels sets its level", async () => {
    await using fake = startFakeProvider();
    const dirs = tempDirs();
    writeFakeModels(dirs.home, fake.url);
    writeSettings(dirs.home, { enabledModels: ["fake/fake-model", "fake-openai/fake-chat", "nothing-matches-this"], modelThinkingLevels: { "fake/fake-model": "minimal" } });
    const p = new Pion({ ...dirs, args: ["--mode", "rpc"] });
    expect((await p.request({ type: "get_state" })).data).toMatchObject({ model: { provider: "fake", id: "fake-model" }, thinkingLevel: "minimal" });
    expect((await p.request({ type: "cycle_model" })).data).toMatchObject({ model: { id: "fake-chat" }, isScoped: true });
    expect((await p.request({ type: "cycle_model" })).data).toMatchObject({ model: { id: "fake-model" }, isScoped: true });
    await p.close();
    expect(p.stderr).toContain('pion models: No models match pattern "nothing-matches-this"');
    // The default model is kept when it is in the scope.
    writeSettings(dirs.home, { enabledModels: ["fake/fake-model", "fake-openai/fake-chat"], defaultProvider: "fake-openai", defaultModel: "fake-chat" });
    const q = new Pion({ ...dirs, args: ["--mode", "rpc"] });
    expect((await q.request({ type: "get_state" })).data.model.id).toBe("fake-chat");
    await q.close();
  });

  test.concurrent("sessionDir: relative to the cwd; the environment and --session-dir win; an untrusted project's is ignored", async () => {
    const dirs = tempDirs();
    const state = async (args: string[], env: Record<string, string> = {}) => {
      const p = new Pion({ ...dirs, args: ["--mode", "rpc", ...args], env: { PION_SESSION_DIR: "", PI_CODING_AGENT_SESSION_DIR: "", ...env } });
      const s = (await p.request({ type: "get_state" })).data;
      await p.close();
      return s.sessionFile as string;
    };
    writeSettings(dirs.home, { sessionDir: "my-sessions" });
    expect(await state([])).toStartWith(join(dirs.cwd, "my-sessions") + "/");
    expect(await state([], { PION_SESSION_DIR: join(dirs.cwd, "from-env") })).toStartWith(join(dirs.cwd, "from-env") + "/");
    expect(await state(["--session-dir", "from-flag"])).toStartWith(join(dirs.cwd, "from-flag") + "/");
    write(join(dirs.cwd, ".pi", "settings.json"), JSON.stringify({ sessionDir: "project-sessions" }));
    expect(await state([])).toStartWith(join(dirs.cwd, "my-sessions") + "/");
    expect(await state(["--approve"])).toStartWith(join(dirs.cwd, "project-sessions") + "/");
  });

  test.concurrent("shellPath (leading ~) runs bash's commands; shellCommandPrefix goes before each; the gate judges the model's command only", async () => {
    await using fake = startFakeProvider();
    const dirs = tempDirs();
    const home = resolve(dirs.home, "..", "user");
    write(join(home, "bin", "myshell"), '#!/bin/bash\necho "via myshell"\nexec bash "$@"\n');
    chmodSync(join(home, "bin", "myshell"), 0o755);
    writeFakeModels(dirs.home, fake.url);
    writeSettings(dirs.home, { shellPath: "~/bin/myshell", shellCommandPrefix: "export GREETING=hello-from-prefix" });
    fake.enqueue(
      { blocks: [{ type: "toolCall", id: "t1", name: "bash", arguments: { command: "echo \"greeting=$GREETING\"" } }] },
      { blocks: [{ type: "text", text: "done" }] },
    );
    const r = await runPion(["--mode", "json", "--model", "fake/fake-model", "--deny", "bash(export *)", "go"], { ...dirs, env: { HOME: home } });
    expect(r.code).toBe(0);
    const body = fake.requests[1]!.body as Body;
    const result = JSON.stringify(body.messages.at(-1));
    expect(result).toContain("via myshell");
    expect(result).toContain("greeting=hello-from-prefix");
  });

  test.concurrent("images.blockImages: the model gets a text note instead of an image; images.autoResize is accepted", async () => {
    await using fake = startFakeProvider();
    const dirs = tempDirs();
    writeFakeModels(dirs.home, fake.url);
    writeSettings(dirs.home, { images: { blockImages: true, autoResize: false } });
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model"] });
    const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
    await p.request({ type: "prompt", message: "look", images: [{ type: "image", data: png, mimeType: "image/png" }, { type: "image", data: png, mimeType: "image/png" }] });
    await p.waitFor("agent_settled");
    await p.close();
    const content = (fake.requests[0]!.body as Body).messages[0]!.content;
    expect(content.map((c) => c.type)).toEqual(["text", "text"]);
    expect(JSON.stringify(content)).toContain("image not sent");
    expect(p.stderr).not.toContain("autoResize");
  });

  test.concurrent("extensions, skills and prompts lists: paths from the settings file's folder, ~, !pattern, +path, -path, builtin: names", async () => {
    await using fake = startFakeProvider();
    const dirs = tempDirs();
    const home = resolve(dirs.home, "..", "user");
    writeFakeModels(dirs.home, fake.url);
    write(join(dirs.home, "skills", "hidden", "SKILL.md"), skill("hidden"));
    write(join(dirs.home, "skills", "shown", "SKILL.md"), skill("shown"));
    write(join(dirs.home, "..", "extra-skills", "extra", "SKILL.md"), skill("extra"));
    write(join(dirs.cwd, "shared-skills", "shared", "SKILL.md"), skill("shared"));
    write(join(dirs.home, "prompts", "drop.md"), "dropped");
    write(join(dirs.home, "prompts", "keep.md"), "kept");
    write(join(home, "my-prompts", "tilde.md"), "from tilde");
    const ext = (name: string) => `export default function (pi) { pi.registerTool({ name: "${name}", description: "${name}", parameters: { type: "object", properties: {} }, async execute() { return { content: [] }; } }); }`;
    write(join(dirs.home, "extensions", "off.ts"), ext("off_tool"));
    write(join(dirs.home, "extensions", "on.ts"), ext("on_tool"));
    write(join(dirs.home, "..", "listed-ext.ts"), ext("listed_tool"));
    writeSettings(dirs.home, {
      skills: ["../extra-skills", "!**/hidden/SKILL.md"],
      prompts: ["~/my-prompts/tilde.md", "!*.md", "+prompts/keep.md", "+~/my-prompts/tilde.md"],
      extensions: ["-builtin:mcp", "../listed-ext.ts", "-extensions/off.ts"],
    });
    write(join(dirs.cwd, ".pion", "settings.json"), JSON.stringify({ skills: ["../shared-skills"] }));
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--approve", "--model", "fake/fake-model"], env: { HOME: home } });
    const commands = (await p.request({ type: "get_commands" })).data.commands.map((c: Rec) => c.name).sort();
    await p.request({ type: "prompt", message: "hi" });
    await p.waitFor("agent_settled");
    await p.close();
    // `-builtin:mcp` switches the built-in /mcp off; /llama stays.
    expect(commands).toEqual(["keep", "llama", "skill:extra", "skill:shared", "skill:shown", "tilde"]);
    const tools = ((fake.requests[0]!.body as Body).tools ?? []).map((t) => t.name);
    expect(tools).toContain("on_tool");
    expect(tools).toContain("listed_tool");
    expect(tools).not.toContain("off_tool");
    expect(p.stderr).not.toContain("builtin");
  });

  test.concurrent("packages: a listed npm package that is not installed (offline: not installed at start-up) is said once on stderr and skipped", async () => {
    const dirs = tempDirs();
    writeSettings(dirs.home, { packages: ["npm:some-pi-package"] });
    const r = await runPion(["--mode", "rpc", "--offline"], { ...dirs, stdin: "" });
    expect(r.code).toBe(0);
    expect(r.stderr.split("package npm:some-pi-package is not installed").length).toBe(2);
  });

  test.concurrent("httpProxy from the user's settings carries the provider requests; a project's is ignored", async () => {
    await using fake = startFakeProvider();
    const proxied: string[] = [];
    const proxy = Bun.serve({
      port: 0,
      async fetch(req) {
        proxied.push(new URL(req.url).pathname);
        return fetch(req.url, { method: req.method, headers: req.headers, body: await req.arrayBuffer() });
      },
    });
    try {
      const dirs = tempDirs();
      writeFakeModels(dirs.home, fake.url);
      writeSettings(dirs.home, { httpProxy: `http://127.0.0.1:${proxy.port}` });
      fake.enqueue({ blocks: [{ type: "text", text: "one" }] }, { blocks: [{ type: "text", text: "two" }] });
      const env = { HTTP_PROXY: "", HTTPS_PROXY: "", http_proxy: "", https_proxy: "", NO_PROXY: "", no_proxy: "" };
      const r = await runPion(["-p", "--model", "fake/fake-model", "hi"], { ...dirs, env });
      expect(r.stdout.trim()).toBe("one");
      expect(proxied).toEqual(["/v1/messages"]);
      writeSettings(dirs.home, {});
      write(join(dirs.cwd, ".pion", "settings.json"), JSON.stringify({ httpProxy: `http://127.0.0.1:${proxy.port}` }));
      const q = await runPion(["-p", "--approve", "--model", "fake/fake-model", "hi"], { ...dirs, env });
      expect(q.stdout.trim()).toBe("two");
      expect(proxied).toEqual(["/v1/messages"]);
      expect(q.stderr).toContain("ignoring httpProxy");
    } finally {
      proxy.stop(true);
    }
  });

  test.concurrent("--verbose names the folders read and the file each setting came from", async () => {
    await using fake = startFakeProvider();
    const dirs = tempDirs();
    const pi = resolve(dirs.home, "..", "pi-agent");
    writeFakeModels(dirs.home, fake.url);
    write(join(pi, "settings.json"), JSON.stringify({ defaultModel: "fake-model", defaultProvider: "fake", steeringMode: "all" }));
    writeSettings(dirs.home, { steeringMode: "one-at-a-time" });
    write(join(dirs.cwd, ".pi", "settings.json"), JSON.stringify({ followUpMode: "all" }));
    write(join(dirs.cwd, ".pi", "APPEND_SYSTEM.md"), "project append");
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    const r = await runPion(["-p", "--approve", "--verbose", "hi"], { ...dirs, env: { PI_CODING_AGENT_DIR: pi } });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`config folders: ${pi}, ${dirs.home}, ${join(dirs.cwd, ".pi")}\n`);
    expect(r.stderr).toContain(`settings: defaultModel from ${join(pi, "settings.json")}`);
    expect(r.stderr).toContain(`settings: steeringMode from ${join(dirs.home, "settings.json")}`);
    expect(r.stderr).toContain(`settings: followUpMode from ${join(dirs.cwd, ".pi", "settings.json")}`);
    expect(r.stderr).toContain(`system prompt files: ${join(dirs.cwd, ".pi", "APPEND_SYSTEM.md")}`);
    expect(systemOf(fake.requests[0]!.body)).toContain("project append");
  });
});
