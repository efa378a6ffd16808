/**
 * Where each extension, prompt and skill came from, as the reference reports it: extensions load
 * in its order (`-e`, the trusted project's folder, listed paths, the user folders, packages),
 * each command's and tool's `sourceInfo` says how it was found, and a package folder named with
 * `-e` brings its skills and prompts too. `pi.getAllTools()` answers before any model call.
 */
import { expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { Pion, tempDirs, type Rec } from "../support/pion.ts";

const write = (path: string, text: string) => {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
};

/** An extension registering command `<name>-cmd` and tool `<name>_tool`; `/tools` notifies what getAllTools says. */
const extension = (name: string, probe = false) =>
  [
    "export default function (pi) {",
    `  pi.registerCommand(${JSON.stringify(`${name}-cmd`)}, { description: "d", handler: async () => {} });`,
    `  pi.registerTool({ name: ${JSON.stringify(`${name}_tool`)}, label: "t", description: "t", parameters: { type: "object", properties: {} }, execute: async () => ({ content: [] }) });`,
    probe ? '  pi.registerCommand("tools", { handler: async (_a, ctx) => ctx.ui.notify(JSON.stringify(pi.getAllTools().map((t) => [t.name, t.sourceInfo])), "info") });' : "",
    "}",
  ].join("\n");

test("sourceInfo and load order of extensions, prompts and skills as the reference reports them; -e package folders bring their skills and prompts", async () => {
  const { home, cwd } = tempDirs();
  const root = dirname(home);
  const agent = join(root, "pi-agent");
  write(join(agent, "extensions", "u.ts"), extension("user"));
  write(join(agent, "prompts", "up.md"), "---\ndescription: user prompt\n---\nhello");
  write(join(agent, "skills", "sk1", "SKILL.md"), "---\nname: sk1\ndescription: a skill\n---\nbody");
  write(join(root, "pkg", "package.json"), JSON.stringify({ name: "si-pkg", version: "1.0.0", pi: { extensions: ["./ext/index.ts"] } }));
  write(join(root, "pkg", "ext", "index.ts"), extension("pkg"));
  write(join(root, "other", "listed.ts"), extension("listed"));
  write(join(agent, "settings.json"), JSON.stringify({ packages: [join(root, "pkg")], extensions: [join(root, "other", "listed.ts")] }));
  write(join(cwd, ".pi", "extensions", "p.ts"), extension("proj"));
  write(join(root, "pkg2", "package.json"), JSON.stringify({ name: "pkg2", version: "1.0.0" }));
  write(join(root, "pkg2", "extensions", "e.ts"), extension("pkg2"));
  write(join(root, "pkg2", "skills", "psk", "SKILL.md"), "---\nname: psk\ndescription: pkg skill\n---\nbody");
  write(join(root, "pkg2", "prompts", "pp2.md"), "---\ndescription: pkg prompt\n---\nhi");
  write(join(root, "c.ts"), extension("cli", true));

  const p = new Pion({ home, cwd, env: { PI_CODING_AGENT_DIR: agent }, args: ["--mode", "rpc", "--approve", "-e", join(root, "c.ts"), "-e", join(root, "pkg2")] });
  const commands = (await p.request({ type: "get_commands" })).data.commands as Rec[];
  const cli = { source: "cli", scope: "temporary", origin: "top-level" };
  const user = { source: "auto", scope: "user", origin: "top-level", baseDir: agent };
  expect(commands.map((c) => [c.name, c.source, c.sourceInfo])).toEqual([
    ["cli-cmd", "extension", { path: join(root, "c.ts"), ...cli }],
    ["tools", "extension", { path: join(root, "c.ts"), ...cli }],
    ["pkg2-cmd", "extension", { path: join(root, "pkg2", "extensions", "e.ts"), ...cli }],
    ["proj-cmd", "extension", { path: join(cwd, ".pi", "extensions", "p.ts"), source: "auto", scope: "project", origin: "top-level", baseDir: join(cwd, ".pi") }],
    ["listed-cmd", "extension", { path: join(root, "other", "listed.ts"), source: "local", scope: "user", origin: "top-level" }],
    ["user-cmd", "extension", { path: join(agent, "extensions", "u.ts"), ...user }],
    ["pkg-cmd", "extension", { path: join(root, "pkg", "ext", "index.ts"), source: join(root, "pkg"), scope: "user", origin: "package", baseDir: join(root, "pkg") }],
    // The reference's built-in extensions come after every other extension.
    ["llama", "extension", { path: "builtin:llama.cpp", source: "builtin", scope: "temporary", origin: "top-level" }],
    ["mcp", "extension", { path: "builtin:mcp", source: "builtin", scope: "temporary", origin: "top-level" }],
    ["pp2", "prompt", { path: join(root, "pkg2", "prompts", "pp2.md"), source: join(root, "pkg2"), scope: "temporary", origin: "package", baseDir: join(root, "pkg2") }],
    ["up", "prompt", { path: join(agent, "prompts", "up.md"), ...user }],
    ["skill:psk", "skill", { path: join(root, "pkg2", "skills", "psk", "SKILL.md"), ...cli }],
    ["skill:sk1", "skill", { path: join(agent, "skills", "sk1", "SKILL.md"), ...user }],
  ]);

  // No prompt has run: the tools are there already, each with where it came from.
  await p.request({ type: "prompt", message: "/tools" });
  const note = await p.waitFor((r) => r.type === "extension_ui_request" && r.method === "notify");
  const tools = new Map(JSON.parse(String(note.message)) as [string, Rec][]);
  expect(tools.get("read")).toEqual({ path: "builtin:read", source: "builtin", scope: "temporary", origin: "top-level" });
  expect(tools.get("cli_tool")).toEqual({ path: join(root, "c.ts"), ...cli });
  expect(tools.get("pkg_tool")).toMatchObject({ source: join(root, "pkg"), origin: "package" });
  expect(tools.get("proj_tool")).toMatchObject({ source: "auto", scope: "project" });
  await p.close();
});
