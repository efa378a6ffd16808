import type { ApprovalAnswer, ApprovalDecision, ApprovalPort, ApprovalRequest } from "../permissions/port.ts";
import type { ApprovalRequestFrame } from "../session/session-types.ts";

/**
 * The approval port of RPC mode: a request is a `tool_approval_request` frame, answered
 * by the host's `tool_approval_response` with the same id. An answer to an unknown id (never
 * asked, already answered, withdrawn) is ignored. After stdin closes nobody can answer:
 * pending and later requests get "unavailable".
 */
export class RpcApprovals implements ApprovalPort {
  private pending = new Map<string, (answer: ApprovalAnswer | undefined) => void>();
  private seq = 0;
  private closed = false;

  constructor(private readonly send: (frame: ApprovalRequestFrame) => void | Promise<void>) {}

  request(req: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer | undefined> {
    if (this.closed) return Promise.resolve(GONE);
    if (signal.aborted) return Promise.resolve(undefined);
    const id = `approval_${++this.seq}`;
    return new Promise((resolve) => {
      const onAbort = () => settle(undefined);
      const settle = (answer: ApprovalAnswer | undefined) => {
        if (!this.pending.delete(id)) return;
        signal.removeEventListener("abort", onAbort);
        resolve(answer);
      };
      this.pending.set(id, settle);
      signal.addEventListener("abort", onAbort, { once: true });
      void this.send({ type: "tool_approval_request", id, ...req });
    });
  }

  respond(frame: { id: string; decision: ApprovalDecision; message?: string }): void {
    this.pending.get(frame.id)?.({ by: "host", decision: frame.decision, ...(frame.message !== undefined ? { message: frame.message } : {}) });
  }

  /** stdin is closed: deny what waits, and everything asked from now on. */
  close(): void {
    this.closed = true;
    for (const settle of [...this.pending.values()]) settle(GONE);
  }
}

const GONE: ApprovalAnswer = { by: "unavailable", why: "the host closed its input, so nobody can answer" };
