/**
 * pi-coding-agent's `runPrintMode(runtime, options)`: one-shot prompting of an AgentSessionRuntime's
 * session (agent-runtime.ts). In json mode the session's header, then each of its events, one JSON
 * line apiece on `process.stdout` (a `message_update` reduced to its usage so far and its delta, no
 * partial message), following the runtime onto each session that replaces the current one. In text
 * mode the final reply's text on `process.stdout`; a failed or aborted reply says why on
 * `process.stderr` and the exit code is 1, as is one cut off at the output token limit (its text
 * is printed first). Resolves to the exit code once the runtime is disposed.
 *
 * Where it differs from the reference's, because it runs inside pion:
 * - no extensions are bound: an in-process session loads none (agent-session-class.ts), so that
 *   step of the reference's is skipped;
 * - no signal handlers are installed: pion owns the process and its signals;
 * - inside pion, an extension's `process.stdout` is stderr (src/util/stdout-guard.ts), so the
 *   output lands on pion's stderr and pion's stdout carries only its own records. That is intended:
 *   a program that wants the output on a stdout of its own runs `pion -p` or `pion --mode json`.
 */
import type { ImageContent } from "../../providers/types.ts";
import { errorMessage } from "../../util/errors.ts";
import { toPionEvent, type RefEvent } from "./agent-core.ts";
import type { AgentSessionRuntime, AgentSessionRuntimeDiagnostic } from "./agent-runtime.ts";
import type { AgentSession } from "./agent-session-class.ts";

type Rec = Record<string, unknown>;

export interface PrintModeOptions {
  mode: "text" | "json";
  initialMessage?: string;
  initialImages?: ImageContent[];
  messages?: string[];
}

type Runtime = Pick<AgentSessionRuntime, "session" | "setRebindSession" | "takeUnreportedDiagnostics" | "dispose">;
type Stream = () => NodeJS.WritableStream;

const stdout: Stream = () => process.stdout;
const stderr: Stream = () => process.stderr;

/**
 * Writes to either stream in call order, each once the previous one was taken; `idle` resolves
 * when all are (json mode's agent waits for it after each event, so a slow reader slows the run).
 */
function orderedWriter() {
  let tail = Promise.resolve();
  let failure: unknown;
  const writeNow = (to: Stream, text: string) =>
    new Promise<void>((done) => {
      try {
        to().write(text, (err?: Error | null) => ((failure ??= err ?? undefined), done()));
      } catch (err) {
        failure ??= err;
        done();
      }
    });
  const write = (to: Stream, text: string): void => {
    tail = tail.then(() => writeNow(to, text));
  };
  /** Resolves once every write so far was taken; rejects with the first write that failed. */
  const idle = async (): Promise<void> => {
    for (let seen = tail; ; seen = tail) {
      await seen;
      if (seen === tail) break;
    }
    if (failure !== undefined) throw failure;
  };
  return { write, idle };
}

/** A session event as its JSON line carries it. */
function toJsonEvent(event: RefEvent): Rec {
  if (event.type !== "message_update") return event;
  const update = event.assistantMessageEvent as RefEvent;
  const { partial: _partial, ...delta } = update;
  return { type: event.type, usage: (event.message as { usage?: unknown } | undefined)?.usage, assistantMessageEvent: toPionEvent(update) ?? delta };
}

const diagnosticLine = (d: AgentSessionRuntimeDiagnostic) => `${d.type === "info" ? "" : `${d.type}: `}${d.message}\n`;

/** Prompt the runtime's session with `initialMessage` (and its images), then each of `messages`; resolves to the exit code. */
export async function runPrintMode(runtime: Runtime, options: PrintModeOptions): Promise<number> {
  if (typeof runtime?.setRebindSession !== "function" || !runtime.session) throw new TypeError("runPrintMode takes an AgentSessionRuntime (made with createAgentSessionRuntime)");
  const { mode, initialMessage, initialImages, messages = [] } = options;
  const out = orderedWriter();
  let session: AgentSession = runtime.session;
  let unsubscribe: (() => void) | undefined;

  const subscribe = () => {
    unsubscribe?.();
    session = runtime.session;
    if (mode !== "json") return;
    const fromSession = session.subscribe((e) => out.write(stdout, `${JSON.stringify(toJsonEvent(e))}\n`));
    const fromAgent = session.agent.subscribe(() => out.idle().catch(() => undefined));
    unsubscribe = () => (fromSession(), fromAgent());
  };
  runtime.setRebindSession(async () => {
    subscribe();
    for (const d of runtime.takeUnreportedDiagnostics()) out.write(stderr, diagnosticLine(d));
  });

  let code = 0;
  try {
    const header = mode === "json" ? (session.sessionManager as { getHeader?: () => unknown }).getHeader?.() : undefined;
    if (header) out.write(stdout, `${JSON.stringify(header)}\n`);
    subscribe();
    if (initialMessage) await session.prompt(initialMessage, initialImages ? { images: initialImages } : {});
    for (const message of messages) await session.prompt(message);
    const last = session.state.messages.at(-1) as { role: string; stopReason?: string; errorMessage?: string; content: { type: string; text?: string }[] } | undefined;
    if (mode === "text" && last?.role === "assistant") {
      if (last.stopReason === "error" || last.stopReason === "aborted") {
        out.write(stderr, `${last.errorMessage || `Request ${last.stopReason}`}\n`);
        code = 1;
      } else {
        for (const part of last.content) if (part.type === "text") out.write(stdout, `${part.text}\n`);
        if (last.stopReason === "length") {
          out.write(stderr, "The reply was cut off: the model hit its output token limit.\n");
          code = 1;
        }
      }
    }
  } catch (err) {
    out.write(stderr, `${errorMessage(err)}\n`);
    code = 1;
  } finally {
    unsubscribe?.();
    runtime.setRebindSession(undefined);
    await runtime.dispose();
  }
  try {
    await out.idle();
  } catch (err) {
    code = 1;
    try {
      process.stderr.write(`${errorMessage(err)}\n`);
    } catch {
      // stderr is gone as well: the exit code says it.
    }
  }
  return code;
}
