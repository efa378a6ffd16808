import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeProvider } from "../support/fake-provider.ts";
import { Pion, runPion, tempDirs, writeFakeModels, writeSettings, type Rec } from "../support/pion.ts";

/**
 * The reference's folders beside pion's: `PI_CODING_AGENT_DIR` (here a temp folder; test/preload.ts
 * points it at an empty one for every other test) and a trusted project's `.pi/`. pion's own
 * folders win on a conflict.
 */

function write(path: string, text: string) {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
}

const skill = (name: string, description: string) => `---\nname: ${name}\ndescription: ${description}\n---\nDo ${name}.`;

/** An extension registering a tool named `name`. */
const toolExtension = (name: string) => `export default function (pi) {
  pi.registerTool({
    name: "${name}",
    description: "from ${name}",
    parameters: { type: "object", properties: {}, additionalProperties: false },
    async execute() { return { content: [{ type: "text", text: "ok" }] }; },
  });
}
`;

/** Temp PION_HOME, project and reference agent folder. */
function setup() {
  const dirs = tempDirs();
  const pi = join(dirs.home, "..", "pi-agent");
  mkdirSync(pi, { recursive: true });
  return { ...dirs, pi, env: { PI_CODING_AGENT_DIR: pi } };
}

type Body = { system: { text: string }[]; tools?: { name: string; description: string }[]; messages: { content: Rec[] }[]; thinking?: unknown };
const systemOf = (body: unknown) => (body as Body).system.map((s) => s.text).join("\n");
const toolsOf = (body: unknown) => ((body as Body).tools ?? []).map((t) => t.name);

describe("the reference's agent folder", () => {
  test.concurrent("settings, skills, prompts, extensions, AGENTS.md, APPEND_SYSTEM.md and mcp.json are read; pion's files win", async () => {
    await using fake = startFakeProvider();
    const d = setup();
    writeFakeModels(d.home, fake.url);
    write(join(d.pi, "settings.json"), JSON.stringify({ defaultModel: "fake-model", defaultProvider: "fake", defaultThinkingLevel: "low", steeringMode: "all" }));
    writeSettings(d.home, { defaultThinkingLevel: "high" });
    write(join(d.pi, "skills", "shared", "SKILL.md"), skill("shared", "the reference's copy"));
    write(join(d.home, "skills", "shared", "SKILL.md"), skill("shared", "pion's copy"));
    write(join(d.pi, "skills", "pi-only", "SKILL.md"), skill("pi-only", "only in the reference's folder"));
    write(join(d.pi, "prompts", "greet.md"), "Say hello to $1");
    write(join(d.pi, "extensions", "pi_tool.ts"), toolExtension("pi_tool"));
    write(join(d.pi, "extensions", "same.ts"), toolExtension("pi_same"));
    write(join(d.home, "extensions", "same.ts"), toolExtension("pion_same"));
    write(join(d.pi, "AGENTS.md"), "Rule from the reference's folder.");
    write(join(d.pi, "APPEND_SYSTEM.md"), "APPENDED FROM PI");
    const marker = join(d.cwd, "mcp-started");
    write(join(d.pi, "mcp.json"), JSON.stringify({ mcpServers: { probe: { command: "bash", args: ["-c", `touch ${marker}`] } } }));
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    const p = new Pion({ ...d, args: ["--mode", "rpc"] });
    const state = (await p.request({ type: "get_state" })).data;
    expect([state.model.id, state.thinkingLevel, state.steeringMode]).toEqual(["fake-model", "high", "all"]);
    await p.request({ type: "prompt", message: "/greet world" });
    await p.waitFor("agent_settled");
    const cmds = (await p.request({ type: "get_commands" })).data.commands.map((c: Rec) => c.name);
    await p.close();
    const body = fake.requests[0]!.body as Body;
    const system = systemOf(body);
    expect(system).toContain("pion's copy");
    expect(system).not.toContain("the reference's copy");
    expect(system).toContain("only in the reference's folder");
    expect(system).toContain("Rule from the reference's folder.");
    expect(system.trim().endsWith("APPENDED FROM PI")).toBe(true);
    expect(body.messages[0]!.content[0]!.text).toBe("Say hello to world");
    expect(toolsOf(body)).toContain("pi_tool");
    expect(toolsOf(body)).toContain("pion_same");
    expect(toolsOf(body)).not.toContain("pi_same");
    expect(cmds).toContain("greet");
    expect(existsSync(marker)).toBe(true);
  });

  test.concurrent("SYSTEM.md replaces the base prompt; pion's over the reference's; --system-prompt over both", async () => {
    await using fake = startFakeProvider();
    const d = setup();
    writeFakeModels(d.home, fake.url);
    write(join(d.pi, "SYSTEM.md"), "BASE FROM PI");
    fake.enqueue({ blocks: [{ type: "text", text: "a" }] }, { blocks: [{ type: "text", text: "b" }] }, { blocks: [{ type: "text", text: "c" }] });
    const run = (args: string[] = []) => runPion(["-p", "--model", "fake/fake-model", ...args, "hi"], d);
    expect((await run()).code).toBe(0);
    write(join(d.home, "SYSTEM.md"), "BASE FROM PION");
    expect((await run()).code).toBe(0);
    expect((await run(["--system-prompt", "BASE FROM FLAG"])).code).toBe(0);
    const systems = fake.requests.map((r) => systemOf(r.body));
    expect(systems.map((s) => s.split("\n")[0])).toEqual(["BASE FROM PI", "BASE FROM PION", "BASE FROM FLAG"]);
    expect(systems[0]).not.toContain("You are pion");
  });

  test.concurrent("PI_CODING_AGENT_DIR is pion's home when PION_HOME is not set: read once", async () => {
    await using fake = startFakeProvider();
    const d = setup();
    writeFakeModels(d.pi, fake.url);
    write(join(d.pi, "AGENTS.md"), "ONCE-ONLY RULE");
    fake.enqueue({ blocks: [{ type: "text", text: "a" }] });
    const r = await runPion(["-p", "--model", "fake/fake-model", "--verbose", "hi"], { ...d, home: "", env: { PI_CODING_AGENT_DIR: d.pi } });
    expect(r.code).toBe(0);
    const system = systemOf(fake.requests[0]!.body);
    expect(system.split("ONCE-ONLY RULE").length).toBe(2);
    expect(r.stderr).toContain(`config folders: ${d.pi}\n`);
  });
  test.concurrent("models.json and auth.json of the reference's folder are read; pion's win", async () => {
    await using fake = startFakeProvider();
    const d = setup();
    // The reference's folder defines the provider and a second model; pion's overrides one field.
    write(
      join(d.pi, "models.json"),
      JSON.stringify({
        providers: {
          refprov: {
            baseUrl: fake.url,
            api: "anthropic-messages",
            models: [
              { id: "ref-model", contextWindow: 1000 },
              { id: "ref-other", contextWindow: 2000 },
            ],
          },
        },
      }),
    );
    write(join(d.home, "models.json"), JSON.stringify({ providers: { refprov: { models: [{ id: "ref-model", contextWindow: 5000 }] } } }));
    write(join(d.pi, "auth.json"), JSON.stringify({ refprov: { type: "api_key", key: "key-from-pi-auth" }, fake: { type: "api_key", key: "pi-loses" } }));
    write(join(d.home, "auth.json"), JSON.stringify({ fake: { type: "api_key", key: "pion-wins" } }));
    const p = new Pion({ ...d, args: ["--mode", "rpc", "--model", "refprov/ref-model"] });
    const models = (await p.request({ type: "get_available_models" })).data.models.filter((m: Rec) => m.provider === "refprov");
    expect(models.map((m: Rec) => [m.id, m.contextWindow])).toEqual([
      ["ref-model", 5000],
      ["ref-other", 2000],
    ]);
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    const from = p.records.length;
    await p.request({ type: "prompt", message: "hi" });
    await p.waitFor("agent_settled", from);
    expect(fake.requests[0]!.headers["x-api-key"]).toBe("key-from-pi-auth");
    await p.close();
    const check = await runPion(["auth", "check", "--model", "fake/fake-model"], { ...d, env: d.env });
    expect(check.code).toBe(1); // no models.json defines "fake" here
    writeFakeModels(d.home, fake.url);
    const { stdout } = await runPion(["auth", "check", "--provider", "fake", "--model", "fake-model", "--json"], { ...d, env: d.env });
    expect(JSON.parse(stdout)).toMatchObject({ ok: true, provider: "fake", credential: "auth.json" });
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    expect((await runPion(["-p", "--model", "fake/fake-model", "hi"], { ...d, env: d.env })).code).toBe(0);
    expect(fake.requests[1]!.headers["x-api-key"]).toBe("pion-wins");
  });
});

describe("a project's .pi folder", () => {
  const project = (d: ReturnType<typeof setup>) => {
    write(join(d.cwd, ".pi", "settings.json"), JSON.stringify({ defaultThinkingLevel: "low", defaultProjectTrust: "always", permissions: { mode: "read-only" } }));
    write(join(d.cwd, ".pi", "skills", "proj", "SKILL.md"), skill("proj", "project skill from .pi"));
    write(join(d.cwd, ".pi", "prompts", "fix.md"), "Fix $1");
    write(join(d.cwd, ".pi", "SYSTEM.md"), "PROJECT BASE");
    write(join(d.cwd, ".pi", "APPEND_SYSTEM.md"), "PROJECT APPEND");
    write(join(d.cwd, ".pi", "extensions", "proj_tool.ts"), toolExtension("proj_tool"));
  };

  test.concurrent("trusted: read like .pion/, over the user's files; .pion/ wins over .pi/; project restrictions apply", async () => {
    await using fake = startFakeProvider();
    const d = setup();
    writeFakeModels(d.home, fake.url);
    project(d);
    write(join(d.pi, "SYSTEM.md"), "USER BASE");
    write(join(d.cwd, ".pion", "settings.json"), JSON.stringify({ steeringMode: "all" }));
    write(join(d.cwd, ".pion", "APPEND_SYSTEM.md"), "PION PROJECT APPEND");
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    const p = new Pion({ ...d, args: ["--mode", "rpc", "--approve", "--model", "fake/fake-model"] });
    const state = (await p.request({ type: "get_state" })).data;
    expect([state.thinkingLevel, state.steeringMode]).toEqual(["low", "all"]);
    await p.request({ type: "prompt", message: "/fix it" });
    await p.waitFor("agent_settled");
    await p.close();
    const body = fake.requests[0]!.body as Body;
    const system = systemOf(body);
    expect(system.startsWith("PROJECT BASE")).toBe(true);
    expect(system.trim().endsWith("PION PROJECT APPEND")).toBe(true);
    expect(system).not.toContain("PROJECT APPEND\n");
    expect(system).toContain("project skill from .pi");
    expect(toolsOf(body)).toContain("proj_tool");
    expect(body.messages[0]!.content[0]!.text).toBe("Fix it");
    expect(p.stderr).toContain(`ignoring defaultProjectTrust in ${join(d.cwd, ".pi", "settings.json")}`);
    expect(p.stderr).toContain("ignored: permissions.mode");
  });

  test.concurrent("untrusted: nothing of .pi/ loads, and the notice names its files", async () => {
    await using fake = startFakeProvider();
    const d = setup();
    writeFakeModels(d.home, fake.url);
    project(d);
    const marker = join(d.cwd, "mcp-started");
    write(join(d.cwd, ".pi", "mcp.json"), JSON.stringify({ mcpServers: { evil: { command: "bash", args: ["-c", `touch ${marker}`] } } }));
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    const r = await runPion(["-p", "--model", "fake/fake-model", "/fix it"], d);
    expect(r.code).toBe(0);
    const body = fake.requests[0]!.body as Body;
    const system = systemOf(body);
    expect(system).toContain("You are pion");
    expect(system).not.toContain("PROJECT");
    expect(system).not.toContain("project skill from .pi");
    expect(toolsOf(body)).not.toContain("proj_tool");
    expect(body.messages[0]!.content[0]!.text).toBe("/fix it");
    expect(existsSync(marker)).toBe(false);
    for (const path of [".pi/settings.json", ".pi/mcp.json", ".pi/extensions", ".pi/skills", ".pi/prompts", ".pi/SYSTEM.md", ".pi/APPEND_SYSTEM.md"]) expect(r.stderr).toContain(path);
  });
});
