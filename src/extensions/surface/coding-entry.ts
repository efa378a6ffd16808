/**
 * The reference's whole-program entry points: `main(args, options)` (its CLI), `runRpcMode(runtime)`
 * and `runPrintMode(runtime, options)` (its modes over an AgentSessionRuntime). Each owns the
 * process: it reads stdin, takes over stdout, installs signal handlers and ends the process
 * (rpc-mode: `process.exit` when stdin ends; print-mode and main: `process.exit` on a signal or an
 * error). The programs that call them import the npm package and are that process. pion's
 * modules exist only inside pion, for the extensions it loads, where pion's own mode already owns
 * all of it (stdin is read by its RPC loop or was the prompt, stdout carries only pion's records,
 * an extension's writes go to stderr), so they stay errors that say what to do instead.
 */
import { unavailable } from "./export-surface.ts";

const SPAWN = "start pion as a child process instead (RpcClient from this module runs `pion --mode rpc`; `pion -p` answers one prompt)";

export const entryExports: Record<string, unknown> = {
  main: unavailable("main", `it is the reference CLI's whole program (it parses a command line, reads stdin, takes over stdout and ends the process), and an extension runs inside pion's program, which owns them; ${SPAWN}`),
  runRpcMode: unavailable("runRpcMode", `it serves a session over the process's stdin and stdout and exits when stdin ends, but inside pion they carry pion's own protocol; ${SPAWN}`),
  runPrintMode: unavailable(
    "runPrintMode",
    "it writes a session's answer to the process's stdout and ends the process on a signal, but inside pion stdout carries only pion's own output; prompt the runtime's session (`await runtime.session.prompt(text)`, then `runtime.session.getLastAssistantText()`), or run `pion -p`",
  ),
};
