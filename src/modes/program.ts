/**
 * `pion run <program> [args...]`: a program written for the reference's SDK (it imports
 * `@earendil-works/pi-coding-agent` and the other reference packages, as it would under node or
 * bun) runs on pion's modules, resolved as for an extension (virtual-modules.ts; in the binary
 * its own dependencies load from its folder). `process.argv` is `[pion, program, ...args]`, as
 * the program's own runtime would give it, and the process ends when the program's work does
 * (with its `process.exitCode`).
 *
 * The program owns stdin and stdout, so the reference's two whole-program entry points work in
 * it (surface/coding-entry.ts): `main(args, { extensionFactories })` runs pion's command line with
 * those factories as inline extensions, and `runRpcMode(runtime)` serves the runtime's session
 * with pion's own RPC mode (surface/program-runtime.ts says what is carried over: folder, session
 * file, model, thinking level, tools, extensions, resources and system prompt). The first of
 * them owns stdin and stdout; a second call, or one from an extension, is refused.
 *
 * Like `-e`, naming the program on the command line is the user's decision to run it; the
 * folder's project configuration is still trusted only as for any pion session.
 */
import { statSync } from "node:fs";
import { extname, resolve } from "node:path";
import { isOffline, pionHome, sessionDirFromEnv } from "../config.ts";
import type { InlineExtension } from "../extensions/types.ts";
import type { AgentSessionRuntime } from "../extensions/surface/agent-runtime.ts";
import { errorMessage } from "../util/errors.ts";
import { stdioWritten, writeErr } from "../util/stdio.ts";
import { runCli } from "./command-line.ts";
import type { CliOptions } from "./compose.ts";

const PROGRAM_EXTENSIONS = new Set([".ts", ".mts", ".cts", ".tsx", ".js", ".mjs", ".cjs", ".jsx"]);

/** Whether `pion run X` names a program (a script's file name); anything else stays a prompt. */
export const isProgramPath = (path: string | undefined): boolean => path !== undefined && PROGRAM_EXTENSIONS.has(extname(path));

const isFile = (path: string): boolean => {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
};

export async function runProgram(file: string, args: string[]): Promise<void> {
  const path = resolve(file);
  if (!isFile(path)) {
    writeErr(`pion run: no program at ${path}\n`);
    process.exitCode = 2;
    return;
  }
  const [{ registerVirtualModules, loadReferenceModules }, { setProgramHost }] = await Promise.all([
    import("../extensions/virtual-modules.ts"),
    import("../extensions/surface/coding-entry.ts"),
  ]);
  registerVirtualModules();
  // A `require` of a reference package cannot wait for it: all of them are ready first.
  await loadReferenceModules();
  setProgramHost({ main: runMain, runRpcMode: serveRuntime });
  process.argv = [process.execPath, path, ...args];
  try {
    await import(path);
  } catch (err) {
    writeErr(`pion: ${errorMessage(err)}\n`);
    process.exitCode = 1;
  }
}

async function runMain(args: string[], inline: InlineExtension[]): Promise<number> {
  const code = await runCli(args, { inlineExtensions: inline });
  await stdioWritten();
  return code;
}

async function serveRuntime(runtime: AgentSessionRuntime): Promise<never> {
  const { describeRuntime } = await import("../extensions/surface/program-runtime.ts");
  const d = describeRuntime(runtime);
  for (const w of d.warnings) writeErr(`pion: runRpcMode: ${w}\n`);
  // pion's session takes over the file; the in-process one is let go first.
  await runtime.dispose();
  const env = process.env;
  const opts: CliOptions = {
    cwd: d.cwd,
    home: pionHome(),
    env,
    mode: "rpc",
    noSession: d.sessionFile === undefined,
    ...(d.sessionFile ? { session: d.sessionFile } : {}),
    sessionDir: sessionDirFromEnv(env),
    ...(d.model ? { provider: d.model.provider, model: d.model.id, thinking: d.thinkingLevel } : {}),
    extensions: d.extensionPaths,
    noExtensions: d.noExtensions,
    inlineExtensions: d.inlineExtensions,
    noBuiltinExtensions: true,
    ...(d.tools ? { tools: d.tools.join(",") } : {}),
    noTools: d.noTools === "all",
    noBuiltinTools: d.noTools === "builtin",
    ...(d.excludeTools ? { excludeTools: d.excludeTools.join(",") } : {}),
    skills: d.skills,
    noSkills: d.noSkills,
    promptTemplates: d.promptTemplates,
    noPromptTemplates: d.noPromptTemplates,
    noContextFiles: d.noContextFiles,
    ...(d.systemPrompt !== undefined ? { systemPrompt: d.systemPrompt } : {}),
    appendSystemPrompt: d.appendSystemPrompt,
    offline: isOffline(false, env),
  };
  const { composeSession } = await import("./compose.ts");
  let code = 1;
  try {
    const composed = await composeSession(opts);
    code = await (await import("./rpc.ts")).runRpcMode(composed);
    await composed.close();
  } catch (err) {
    writeErr(`pion: ${errorMessage(err)}\n`);
  }
  await stdioWritten();
  process.exit(code);
}
