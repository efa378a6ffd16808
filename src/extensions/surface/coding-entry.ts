/**
 * The reference's whole-program entry points: `main(args, options)` (its CLI), `runRpcMode(runtime)`
 * and `runPrintMode(runtime, options)` (its modes over an AgentSessionRuntime). `main` and
 * `runRpcMode` own the process: main parses a command line, reads stdin, takes over stdout and ends
 * the process; rpc-mode serves a session over stdin and stdout and calls `process.exit` when stdin
 * ends. The programs that call them import the npm package and are that process. pion's modules
 * exist only inside pion, for the extensions it loads, where pion's own mode already owns all of it
 * (stdin is read by its RPC loop or was the prompt, stdout carries only pion's records), so those
 * two stay errors that say what to do instead. `runPrintMode` only prompts a runtime's session and
 * writes its output, so it is pion's (coding-print-mode.ts), without the signal handlers the
 * reference's installs; inside pion its output goes to stderr, as every extension's stdout does.
 */
import { unavailable } from "./export-surface.ts";
import { runPrintMode } from "./coding-print-mode.ts";

const SPAWN = "start pion as a child process instead (RpcClient from this module runs `pion --mode rpc`; `pion -p` answers one prompt)";

export const entryExports: Record<string, unknown> = {
  main: unavailable("main", `it is the reference CLI's whole program (it parses a command line, reads stdin, takes over stdout and ends the process), and an extension runs inside pion's program, which owns them; ${SPAWN}`),
  runRpcMode: unavailable("runRpcMode", `it serves a session over the process's stdin and stdout and exits when stdin ends, but inside pion they carry pion's own protocol; ${SPAWN}`),
  runPrintMode,
};
