/**
 * `ctx.reload()` as in the reference: session_shutdown (reason "reload"), every extension's module
 * evaluated again from disk and its factory run again (what it registered before is gone), the
 * skills and prompts read again, then session_start and resources_discover (reason "reload"). At
 * start-up resources_discover follows session_start too.
 */
import { expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { Pion, tempDirs, type Rec } from "../support/pion.ts";

const write = (path: string, text: string) => {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
};

/** Logs the lifecycle events in a global list (which outlives a reload); registers `/<name>` and `/events`, `/reload-me`. */
const extension = (command: string) => `
const log = (globalThis.__reloadLog ??= []);
log.push("factory:${command}");
export default function (pi) {
  for (const e of ["session_start", "resources_discover", "session_shutdown"]) pi.on(e, (ev) => { log.push(e + ":" + ev.reason); });
  pi.registerCommand(${JSON.stringify(command)}, { description: "d", handler: async () => {} });
  pi.registerCommand("events", { handler: async (_a, ctx) => ctx.ui.notify(log.join(" "), "info") });
  // After await ctx.reload() the old ctx is stale (it throws, as in the reference); what it gave before still works.
  pi.registerCommand("reload-me", { handler: async (_a, ctx) => { const ui = ctx.ui; await ctx.reload(); ui.notify("reloaded", "info"); } });
}
`;

test("ctx.reload: session_shutdown, the extension's new code and new skills loaded, then session_start and resources_discover", async () => {
  const { home, cwd } = tempDirs();
  const ext = join(dirname(home), "ext.ts");
  write(ext, extension("before"));
  const p = new Pion({ home, cwd, args: ["--mode", "rpc", "-e", ext] });
  const names = async () => ((await p.request({ type: "get_commands" })).data.commands as Rec[]).map((c) => c.name);
  const note = async (message: string) => {
    const from = p.records.length;
    await p.request({ type: "prompt", message });
    return String((await p.waitFor((r) => r.type === "extension_ui_request" && r.method === "notify", from)).message);
  };
  expect(await names()).toEqual(["before", "events", "reload-me", "llama", "mcp"]);
  expect(await note("/events")).toBe("factory:before session_start:startup resources_discover:startup");

  write(ext, extension("after"));
  write(join(home, "skills", "fresh", "SKILL.md"), "---\nname: fresh\ndescription: written while running\n---\nbody");
  expect(await note("/reload-me")).toBe("reloaded");
  expect(await names()).toEqual(["after", "events", "reload-me", "llama", "mcp", "skill:fresh"]);
  // The old factory's handlers saw the shutdown; the new module's the start.
  expect(await note("/events")).toBe("factory:before session_start:startup resources_discover:startup session_shutdown:reload factory:after session_start:reload resources_discover:reload");
  await p.close();
});

test("at exit (stdin closed) extensions see session_shutdown with reason quit, as in the reference", async () => {
  const { home, cwd } = tempDirs();
  const ext = join(dirname(home), "quit.ts");
  const out = join(dirname(home), "shutdown.txt");
  write(ext, `import { appendFileSync } from "node:fs";\nexport default function (pi) { pi.on("session_shutdown", (e) => { appendFileSync(${JSON.stringify(out)}, e.reason + "\\n"); }); }\n`);
  const p = new Pion({ home, cwd, args: ["--mode", "rpc", "-e", ext] });
  await p.request({ type: "get_state" });
  expect(await p.close()).toBe(0);
  expect(readFileSync(out, "utf8")).toBe("quit\n");
});
