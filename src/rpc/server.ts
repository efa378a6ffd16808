import * as v from "valibot";
import { commandSchema, describeIssues, isCommandType, SILENT_FRAMES, type Command } from "../protocol/commands.ts";
import { Background, failure, RawJson, success, successLine } from "../protocol/responses.ts";
import { errorMessage, PionError } from "../util/errors.ts";
import { log } from "../util/log.ts";
import { busy } from "../util/quiet.ts";
import { jsonLineBatches, type JsonlRecord } from "./jsonl.ts";
import type { Writer } from "./writer.ts";

export type Handler = (cmd: Command) => unknown;
export type Handlers = { [K in Command["type"]]: (cmd: Extract<Command, { type: K }>) => unknown };

/** Commands that act at once instead of waiting behind earlier commands. */
const BYPASS: ReadonlySet<string> = new Set([
  "abort",
  "abort_bash",
  "abort_retry",
  "abort_and_prompt",
  "extension_ui_response",
  "host_tool_update",
  "host_tool_result",
  "tool_approval_response",
]);

/**
 * Reads commands until EOF: each line is parsed, validated and dispatched; every
 * non-blank line gets exactly one response (sub-protocol answers get none). Commands
 * take effect in arrival order; a handler that starts long work answers when the work
 * is accepted, so the queue keeps moving.
 */
export async function serveRpc(input: AsyncIterable<Uint8Array>, writer: Writer, handlers: Handlers): Promise<void> {
  const queue = new SerialQueue();
  const outstanding = new Set<Promise<unknown>>();
  for await (const batch of jsonLineBatches(input)) {
    for (const rec of batch) onRecord(rec);
  }
  await queue.idle();
  // EOF: background commands (bash) still answer before the process exits.
  while (outstanding.size > 0) await Promise.allSettled([...outstanding]);

  function onRecord(rec: JsonlRecord): void {
    if ("error" in rec) {
      writer.write(failure(undefined, "parse", `Failed to parse command: ${rec.error}`));
      return;
    }
    const line = rec.line;
    if (line.trim() === "") return;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch (err) {
      writer.write(failure(undefined, "parse", `Failed to parse command: ${errorMessage(err)}`));
      return;
    }
    const cmd = validate(json);
    if ("error" in cmd) {
      writer.write(failure(cmd.id, cmd.command, cmd.error));
      return;
    }
    // In hand from its arrival until its response is written (or, for background work, accepted).
    const answered = busy();
    const run = () => {
      let r: void | Promise<void> = undefined;
      try {
        r = dispatch(cmd.value, writer, handlers, outstanding);
        return r instanceof Promise ? r.finally(answered) : r;
      } finally {
        if (!(r instanceof Promise)) answered();
      }
    };
    if (BYPASS.has(cmd.value.type)) void run();
    else queue.push(run);
  }
}

type Validated = { value: Command } | { error: string; id?: string; command?: string };

function validate(json: unknown): Validated {
  // Not an object, or no string type: answered like the reference, "Unknown command: <type>".
  const rec = typeof json === "object" && json !== null && !Array.isArray(json) ? (json as Record<string, unknown>) : {};
  const id = typeof rec.id === "string" ? rec.id : undefined;
  const type = rec.type;
  if (typeof type !== "string") {
    return { id, command: type === undefined ? undefined : JSON.stringify(type), error: `Unknown command: ${type === undefined ? "undefined" : JSON.stringify(type)}` };
  }
  if (!isCommandType(type)) return { id, command: type, error: `Unknown command: ${type}` };
  const parsed = v.safeParse(commandSchema(type), json);
  if (!parsed.success) return { id, command: type, error: describeIssues(parsed.issues) };
  return { value: parsed.output as Command };
}

/**
 * Run one command and write its response. Synchronous handlers are answered without a
 * promise hop (a burst of get_state stays synchronous); a returned promise means the
 * writer wants the queue to wait (stdout backpressure) or the handler is async.
 */
function dispatch(cmd: Command, writer: Writer, handlers: Handlers, outstanding: Set<Promise<unknown>>): void | Promise<void> {
  const silent = SILENT_FRAMES.has(cmd.type);
  const id = "id" in cmd && !silent ? cmd.id : undefined;
  const respond = (data: unknown): Promise<void> | undefined => {
    if (silent) return undefined;
    if (!(data instanceof RawJson)) return writer.write(success(id, cmd.type, data));
    // A stream that fails midway has ended its line; the failure follows it, with the id.
    return writer.writeStream(successLine(id, cmd.type, data))?.catch((err) => fail(err));
  };
  const fail = (err: unknown): Promise<void> | undefined => {
    if (!(err instanceof PionError)) log("rpc", `${cmd.type} failed`, { error: errorMessage(err) });
    return silent ? undefined : writer.write(failure(id, cmd.type, errorMessage(err)));
  };
  const settle = (data: unknown): Promise<void> | undefined => {
    if (data instanceof Background) {
      const done = data.result.then(respond, fail).finally(() => outstanding.delete(done));
      outstanding.add(done);
      return undefined;
    }
    return respond(data);
  };
  let data: unknown;
  try {
    data = (handlers[cmd.type] as Handler)(cmd);
  } catch (err) {
    return fail(err);
  }
  if (data instanceof Promise) return data.then(settle, fail);
  return settle(data);
}

/** Runs tasks one after another; synchronous tasks run without a promise hop. */
class SerialQueue {
  private tasks: (() => unknown)[] = [];
  private busy = false;
  private waiters: (() => void)[] = [];

  push(task: () => unknown): void {
    if (!this.busy && this.tasks.length === 0) {
      // Fast path: run now; only a task that returns a promise makes the queue wait.
      const r = task();
      if (r instanceof Promise) {
        this.busy = true;
        void r.then(() => this.drain(), () => this.drain());
      }
      return;
    }
    this.tasks.push(task);
    if (!this.busy) void this.drain();
  }

  private async drain(): Promise<void> {
    this.busy = true;
    while (this.tasks.length > 0) {
      const r = this.tasks.shift()!();
      if (r instanceof Promise) await r.catch(() => undefined);
    }
    this.busy = false;
    for (const w of this.waiters.splice(0)) w();
  }

  idle(): Promise<void> {
    if (!this.busy && this.tasks.length === 0) return Promise.resolve();
    return new Promise((r) => this.waiters.push(r));
  }
}
