/**
 * A settings.json that changes while an agent runs, for the tests of what `ctx.reload()` and a
 * session change read again: extensions that log their lifecycle to one file, a local package,
 * a skills and a prompts folder, and the settings before and after.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Rec } from "./pion.ts";
import type { RpcAgent } from "./reference-rpc.ts";

export const write = (path: string, text: string): void => {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
};

/**
 * Extension `name` logging its factory runs and lifecycle events to `log`, with a command
 * `<name>-cmd`; the main one adds `/reload-me` (the refusal's message is notified), `/tools`
 * (the active tools), `/narrow` (only read active), `/context` (whether the system prompt holds
 * CONTEXT-MARK) and `/fresh` (ctx.newSession), and registers `main_tool`. Each factory run logs
 * the module's own count of runs, so a test sees whether the module was evaluated again.
 */
export const loggingExtension = (name: string, log: string, main = false): string => `
import { appendFileSync } from "node:fs";
const note = (s) => appendFileSync(${JSON.stringify(log)}, ${JSON.stringify(name)} + " " + s + "\\n");
let runs = 0;
export default function (pi) {
  note(++runs === 1 ? "factory" : "factory again");
  for (const e of ["session_start", "resources_discover", "session_shutdown"]) pi.on(e, (ev) => { note(e + ":" + ev.reason); });
  pi.registerCommand(${JSON.stringify(`${name}-cmd`)}, { description: "d", handler: async () => {} });
  ${
    main
      ? `pi.registerCommand("reload-me", { handler: async (_a, ctx) => { const ui = ctx.ui; try { await ctx.reload(); ui.notify("reloaded", "info"); } catch (e) { ui.notify("refused: " + e.message, "info"); } } });
  pi.registerCommand("tools", { handler: async (_a, ctx) => ctx.ui.notify(pi.getActiveTools().join(","), "info") });
  pi.registerTool({ name: "main_tool", label: "main tool", description: "d", parameters: { type: "object", properties: {} }, execute: async () => ({ content: [{ type: "text", text: "x" }], details: {} }) });
  pi.registerCommand("narrow", { handler: async (_a, ctx) => { pi.setActiveTools(["read"]); ctx.ui.notify("narrowed", "info"); } });
  pi.registerCommand("context", { handler: async (_a, ctx) => ctx.ui.notify(String(ctx.getSystemPrompt().includes("CONTEXT-MARK")), "info") });
  pi.registerCommand("fresh", { handler: async (_a, ctx) => { const ui = ctx.ui; const r = await ctx.newSession(); ui.notify("cancelled: " + r.cancelled, "info"); } });`
      : ""
  }
}
`;

/**
 * Settings before and after: extensions [main, gone] become [main, added] plus a local package
 * (whose extension and skill load), a skills and a prompts folder join, steeringMode and
 * followUpMode become "all", auto-compaction is turned off, defaultTools gains grep. `extra`
 * adds keys to either side (the `after` side's win over these).
 */
export function settingsChange(dirs: { home: string; cwd: string }, extra: { before?: Rec; after?: Rec } = {}) {
  const root = dirname(dirs.home);
  const log = join(root, "lifecycle.log");
  const ext = (name: string, main = false) => {
    const path = join(root, "exts", `${name}.ts`);
    write(path, loggingExtension(name, log, main));
    return path;
  };
  const main = ext("main", true);
  const gone = ext("gone");
  const added = ext("added");
  const pkg = join(root, "pkg");
  write(join(pkg, "package.json"), JSON.stringify({ name: "local-pkg", version: "1.0.0" }));
  write(join(pkg, "extensions", "from-pkg.ts"), loggingExtension("pkg", log));
  write(join(pkg, "skills", "pkg-skill", "SKILL.md"), "---\nname: pkg-skill\ndescription: from the package\n---\nbody");
  write(join(root, "more-skills", "listed", "SKILL.md"), "---\nname: listed\ndescription: listed in settings\n---\nbody");
  write(join(root, "more-prompts", "greet.md"), "---\ndescription: a listed prompt\n---\nSay hello");
  const settings = (s: Rec) => writeFileSync(join(dirs.home, "settings.json"), JSON.stringify(s));
  settings({ extensions: [main, gone], defaultTools: ["read", "bash"], ...extra.before });
  const change = () =>
    settings({
      extensions: [main, added],
      packages: [pkg],
      skills: [join(root, "more-skills")],
      prompts: [join(root, "more-prompts")],
      steeringMode: "all",
      followUpMode: "all",
      compaction: { enabled: false },
      defaultTools: ["read", "bash", "grep"],
      ...extra.after,
    });
  const steps = () => (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean) : []);
  return { change, steps, main };
}

/** Sends `message` (an extension command that notifies) and resolves with what it notified. */
export async function notified(agent: RpcAgent, message: string): Promise<string> {
  const from = agent.records.length;
  await agent.request({ type: "prompt", message });
  return String((await agent.waitFor((r) => r.type === "extension_ui_request" && r.method === "notify", from)).message);
}
