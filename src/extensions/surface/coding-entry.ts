/**
 * The reference's whole-program entry points: `main(args, options)` (its CLI), `runRpcMode(runtime)`
 * and `runPrintMode(runtime, options)` (its modes over an AgentSessionRuntime).
 *
 * `main` and `runRpcMode` own the process: main parses a command line, reads stdin, takes over
 * stdout and ends the process; rpc-mode serves a session over stdin and stdout and exits when
 * stdin ends. The programs that call them are that process: with pion they run as
 * `pion run program.ts` (modes/program.ts), which hands these two pion's own CLI and RPC mode
 * (`ProgramHost`); the first of them to start owns stdin and stdout from then on. Inside a mode
 * pion already serves (an extension's call, or a second call), stdin and stdout are taken, so the
 * call is an error saying what to do instead. `runPrintMode` only prompts a runtime's session
 * and writes its output, so it is pion's everywhere (coding-print-mode.ts); inside pion its
 * output goes to stderr, as every extension's stdout does.
 */
import { runPrintMode } from "./coding-print-mode.ts";
import type { AgentSessionRuntime } from "./agent-runtime.ts";
import type { InlineExtension } from "../types.ts";
import { inlineExtensions } from "./agent-runtime-resources.ts";

/** What `pion run` offers its program: pion's CLI and pion's RPC mode, each owning the process's stdio. */
export interface ProgramHost {
  /** The CLI on `args`; resolves with its exit code. */
  main(args: string[], inline: InlineExtension[]): Promise<number>;
  /** pion's RPC mode serving the runtime's session until stdin ends; then the process exits. */
  runRpcMode(runtime: AgentSessionRuntime): Promise<never>;
}

let host: ProgramHost | undefined;
let owner: string | undefined;

/** Called by `pion run` before it loads the program: stdin and stdout are the program's to hand over. */
export function setProgramHost(programHost: ProgramHost): void {
  host = programHost;
}

const SPAWN = "start pion as a child process instead (RpcClient from this module runs `pion --mode rpc`; `pion -p` answers one prompt), or run a program that calls it with `pion run <program>`";

/** The process's stdin and stdout for `name` once `valid` (the arguments) holds, or an error saying who has them. */
function takeStdio(name: string, valid: () => void = () => {}): ProgramHost {
  if (!host) throw new Error(`${name} cannot run here: it takes over the process's stdin and stdout, and inside pion they carry pion's own protocol; ${SPAWN}`);
  if (owner) throw new Error(`${name} cannot run here: the process's stdin and stdout are already served by ${owner}`);
  valid();
  owner = name;
  return host;
}

type Factory = (pi: never) => unknown;

/** The reference's CLI entry: pion's command line (`options.extensionFactories` load as inline extensions); sets `process.exitCode`. */
async function main(args: string[], options: { extensionFactories?: (Factory | { name: string; factory: Factory })[] } = {}): Promise<void> {
  const cli = takeStdio("main");
  process.exitCode = await cli.main([...args], inlineExtensions(options.extensionFactories ?? []));
}

/** The reference's RPC mode over a runtime: pion's RPC mode on the runtime's session; never returns (the process exits when stdin ends). */
async function runRpcMode(runtime: AgentSessionRuntime): Promise<never> {
  const rpc = takeStdio("runRpcMode", () => {
    if (!runtime || typeof runtime !== "object" || !runtime.session) throw new Error("runRpcMode(runtime) takes an AgentSessionRuntime (from createAgentSessionRuntime)");
  });
  return rpc.runRpcMode(runtime);
}

export const entryExports: Record<string, unknown> = { main, runRpcMode, runPrintMode };
