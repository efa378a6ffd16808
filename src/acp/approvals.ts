/**
 * The approval port of ACP mode: a request is `session/request_permission` to the editor,
 * with allow once / allow always / reject once as its options. A withdrawn request (the run
 * was aborted, the wait timed out) is cancelled with `$/cancel_request` by the SDK.
 */
import type * as acp from "@agentclientprotocol/sdk";
import type { ApprovalAnswer, ApprovalDecision, ApprovalPort, ApprovalRequest } from "../permissions/port.ts";
import { errorMessage } from "../util/errors.ts";
import { toolKind, toolTitle } from "./updates.ts";

const OPTIONS: Record<ApprovalDecision, acp.PermissionOption> = {
  allow: { optionId: "allow", name: "Allow once", kind: "allow_once" },
  allow_always: { optionId: "allow_always", name: "Always allow", kind: "allow_always" },
  deny: { optionId: "deny", name: "Reject", kind: "reject_once" },
};

export function acpApprovals(client: acp.AgentContext, sessionId: () => string): ApprovalPort {
  return {
    async request(req: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer | undefined> {
      if (signal.aborted) return undefined;
      try {
        const res = await client.request(
          "session/request_permission",
          {
            sessionId: sessionId(),
            toolCall: { toolCallId: req.toolCallId, title: toolTitle(req.toolName, req.args), kind: toolKind(req.toolName), status: "pending", rawInput: req.args },
            options: req.options.map((o) => OPTIONS[o]),
          },
          { cancellationSignal: signal },
        );
        if (signal.aborted || res.outcome.outcome === "cancelled") return undefined;
        const picked = req.options.find((o) => OPTIONS[o].optionId === (res.outcome as { optionId: string }).optionId);
        return picked ? { by: "host", decision: picked } : { by: "unavailable", why: `the editor answered with an unknown option` };
      } catch (err) {
        if (signal.aborted) return undefined;
        return { by: "unavailable", why: `the editor could not be asked: ${errorMessage(err)}` };
      }
    },
  };
}
