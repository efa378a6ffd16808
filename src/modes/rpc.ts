import { RpcApprovals } from "../rpc/approvals.ts";
import { createHandlers } from "../rpc/handlers.ts";
import { serveRpc } from "../rpc/server.ts";
import { closableSink, createWriter } from "../rpc/writer.ts";
import { EncodedEvent } from "../util/json-bytes.ts";
import type { Composed } from "./compose.ts";

/**
 * The command loop over stdin. On EOF the running prompt finishes and persists before
 * exit 0. SIGTERM/SIGHUP/SIGINT abort the run, persist, and exit 128 + the signal's number;
 * a second signal exits at once.
 */
export async function runRpcMode(composed: Composed): Promise<number> {
  const { session } = composed;
  // A host that closed stdout hears nothing more: finish as on stdin EOF, quietly.
  const writer = createWriter(closableSink(Bun.stdout.writer(), () => void finishQuietly()));
  session.subscribe((e) => (e instanceof EncodedEvent ? writer.writeBytes(e.bytes) : writer.write(e)), { replay: true });

  let stopping = false;
  const onSignal = (code: number) => async () => {
    if (stopping) process.exit(code);
    stopping = true;
    await session.abort();
    await writer.drain();
    process.exit(code);
  };
  process.on("SIGTERM", onSignal(143));
  process.on("SIGHUP", onSignal(129));
  process.on("SIGINT", onSignal(130));
  // An extension's ctx.shutdown(): finish like stdin EOF.
  async function finishQuietly(): Promise<void> {
    stopping = true;
    await session.abort();
    await writer.drain();
    await composed.end();
    composed.store.close();
    process.exit(0);
  }
  composed.shutdown.addEventListener("abort", () => {
    void finishQuietly();
  });

  // Approvals are asked on stdout and answered on stdin (tool_approval_request / _response).
  const approvals = composed.permissions ? new RpcApprovals((frame) => session.publish(frame)) : undefined;
  if (approvals) composed.permissions!.port = approvals;

  await serveRpc(Bun.stdin.stream(), writer, createHandlers({ ...composed, approvals }));
  // Nobody can answer any more: a run waiting for approval is denied and goes on to its end.
  approvals?.close();
  await session.idle();
  await writer.drain();
  await composed.end();
  composed.store.close();
  return 0;
}
