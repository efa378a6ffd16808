import { writeErr } from "../util/stdio.ts";
import { unavailablePort } from "../permissions/port.ts";
import { closableSink, createWriter } from "../rpc/writer.ts";
import { EncodedEvent } from "../util/json-bytes.ts";
import type { TextContent } from "../providers/types.ts";
import { errorMessage } from "../util/errors.ts";
import { readFileArgs, type FileArgs } from "./file-args.ts";
import type { Composed } from "./compose.ts";

/** What print mode says on stderr about a final reply cut off at the output limit (the reference's words). */
const TRUNCATED = "Response was truncated: the model reached its output token limit";

/**
 * One-shot modes. json: the session header line, then every event of each prompt in
 * turn. print: only the final assistant text on stdout (progress on stderr when it is a
 * terminal). Exit 0 when the last turn of the run started here ended normally, 1 when it
 * failed or was aborted, stopped at a run limit, or pion itself failed (the reason on stderr;
 * for a limit in both modes), 2 when there is no prompt, 3 when the sandbox asked for cannot
 * start (before any request), 128 + the signal's number when a signal
 * stopped it (130 for SIGINT, 143 SIGTERM, 129 SIGHUP; the run is aborted and persisted). In print mode, as in the reference's,
 * a final reply cut off at the output limit (stopReason length) prints its text and exits 1,
 * saying so on stderr; json mode exits 0 (the event stream shows it). Piped stdin (not a
 * terminal) is read whole and goes before the first prompt, a blank line between them; it is
 * the prompt when none is given; stdin that is not UTF-8 exits 1. `@path` arguments put their
 * files into the first prompt, after stdin, before the message (file-args.ts); one that cannot
 * be read exits 1 before any request.
 */
export async function runJsonMode(composed: Composed, prompts: string[], mode: "json" | "print"): Promise<number> {
  const { session } = composed;
  // One first prompt: piped stdin (never a terminal), then the `@path` files, then the first message.
  let files: FileArgs;
  try {
    files = await readFileArgs(prompts, composed.cwd);
  } catch (err) {
    writeErr(`pion: ${errorMessage(err)}\n`);
    return 1;
  }
  let piped = "";
  if (!process.stdin.isTTY) {
    try {
      piped = new TextDecoder("utf-8", { fatal: true }).decode(await Bun.stdin.bytes()).trim();
    } catch {
      writeErr(`pion: stdin is not valid UTF-8 text\n`);
      return 1;
    }
  }
  prompts = files.messages;
  if (piped || files.prefix) {
    const first = `${files.prefix}${prompts[0] ?? ""}`;
    prompts = [piped && first ? `${piped}\n\n${first}` : piped || first, ...prompts.slice(1)];
  }
  if (prompts.length === 0) {
    writeErr(`pion: no prompt given (pass it as an argument or on stdin)\n`);
    return 2;
  }
  // A sandbox that cannot start stops the run before any command (never a silent fallback).
  if (composed.sandbox) {
    const probe = await composed.sandbox.probe();
    if (!probe.ok) {
      writeErr(`pion: the ${composed.sandbox.policy.mode} sandbox cannot start here: ${probe.why}\npion: ${probe.remedy}\n`);
      await composed.end();
      composed.store.close();
      return 3;
    }
  }
  // Nobody to ask: a call that needs approval is denied unless a rule allows it, and the run goes on.
  if (composed.permissions) composed.permissions.port = unavailablePort(`pion runs in ${mode} mode, where nobody can approve tool calls`);
  // A reader that stops early (`| head -1`): the run is aborted (and persisted), and pion exits 0 quietly.
  let readerGone = false;
  const writer = createWriter(
    closableSink(Bun.stdout.writer(), () => {
      readerGone = true;
      void session.abort();
    }),
  );
  if (mode === "json") {
    writer.write(session.header);
    session.subscribe((e) => (e instanceof EncodedEvent ? writer.writeBytes(e.bytes) : writer.write(e)), { replay: true });
  } else if (process.stderr.isTTY) {
    session.subscribe((e) => {
      if (e.type === "tool_execution_start") writeErr(`[${e.toolName}] ${JSON.stringify(e.args).slice(0, 200)}\n`);
      else if (e.type === "auto_retry_start") writeErr(`[retry ${e.attempt}/${e.maxAttempts}] ${e.errorMessage}\n`);
    });
  }
  // A signal aborts the run, which persists, and pion exits 128 + the signal's number (130 for
  // Ctrl-C, as shells report it); a second signal exits at once with the same status.
  let interrupted: number | undefined;
  const onSignal = (status: number) => async () => {
    if (interrupted !== undefined) process.exit(status);
    interrupted = status;
    await session.abort();
  };
  process.on("SIGTERM", onSignal(143));
  process.on("SIGINT", onSignal(130));
  process.on("SIGHUP", onSignal(129));

  const finish = async (code: number, reason?: string): Promise<number> => {
    await writer.drain();
    if (reason) writeErr(`pion: ${reason}\n`);
    await composed.end();
    composed.store.close();
    return code;
  };
  let commandsOnly = true;
  for (const [i, p] of prompts.entries()) {
    // A built-in command (`/mcp`) is handled here, without a model call.
    const builtin = composed.builtins?.run(p);
    if (builtin) {
      await builtin;
      continue;
    }
    commandsOnly = false;
    try {
      session.prompt(p, i === 0 && files.images.length > 0 ? files.images : undefined);
    } catch (err) {
      return finish(1, errorMessage(err));
    }
    await session.idle();
    // pion's own failure (the store, a hook): the run stopped without the model's say.
    const { failure } = session.lastRun();
    if (failure !== undefined) return finish(1, failure);
    if (interrupted !== undefined || readerGone) break;
  }
  if (interrupted !== undefined) return finish(interrupted, "interrupted");
  if (readerGone) return finish(0);
  // The outcome is this invocation's last run, never an earlier message of a resumed session.
  const last = session.lastRun().assistant;
  if (mode === "print" && last) {
    const text = last.content.filter((c): c is TextContent => c.type === "text").map((c) => c.text).join("");
    if (text) writer.writeLine(text.endsWith("\n") ? text : `${text}\n`);
  }
  // A run limit ends a run whose last reply may well have succeeded: exit 1 with the limit on stderr.
  const { outcome } = session.lastRun();
  if (outcome?.stopReason === "limit") return finish(1, outcome.errorMessage);
  if (!last) return commandsOnly ? finish(0) : finish(1, "the run ended without a reply");
  if (last.stopReason === "error" || last.stopReason === "aborted") {
    return finish(1, mode === "print" ? (last.errorMessage ?? (last.stopReason === "aborted" ? "aborted" : undefined)) : undefined);
  }
  if (mode === "print" && last.stopReason === "length") return finish(1, TRUNCATED);
  return finish(0);
}
