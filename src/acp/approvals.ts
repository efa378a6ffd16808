/**
 * The approval port of ACP mode: a request is `session/request_permission` to the editor,
 * with allow once / allow always / reject once / reject always as its options. Allow always
 * becomes the gate's session rule (stored with the session); reject always is remembered by
 * this port for the rest of the process's session: the same tool on the same command or path
 * is refused without asking again. A withdrawn request (the run was aborted, the wait timed
 * out) is cancelled with `$/cancel_request` by the SDK.
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
const REJECT_ALWAYS: acp.PermissionOption = { optionId: "deny_always", name: "Always reject", kind: "reject_always" };

/** What "the same call" means for reject always: the tool and the command or path it works on. */
const subjectKey = (req: ApprovalRequest) => {
  const a = req.args as { command?: unknown; path?: unknown };
  return JSON.stringify([req.toolName, typeof a.command === "string" ? a.command : typeof a.path === "string" ? a.path : null]);
};

export function acpApprovals(client: acp.AgentContext, sessionId: () => string): ApprovalPort {
  const rejected = new Set<string>();
  return {
    async request(req: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer | undefined> {
      if (signal.aborted) return undefined;
      if (rejected.has(subjectKey(req))) return { by: "host", decision: "deny", message: "the user chose to always reject this call" };
      // A withdrawn request settles at once: the editor's late answer (or none) no longer matters.
      let onAbort: () => void = () => {};
      const withdrawn = new Promise<undefined>((resolve) => {
        onAbort = () => resolve(undefined);
        signal.addEventListener("abort", onAbort, { once: true });
      });
      try {
        const asked = client.request(
          "session/request_permission",
          {
            sessionId: sessionId(),
            toolCall: { toolCallId: req.toolCallId, title: toolTitle(req.toolName, req.args), kind: toolKind(req.toolName), status: "pending", rawInput: req.args },
            options: [...req.options.map((o) => OPTIONS[o]), REJECT_ALWAYS],
          },
          { cancellationSignal: signal },
        );
        asked.catch(() => undefined);
        const res = await Promise.race([asked, withdrawn]);
        if (!res || signal.aborted || res.outcome.outcome === "cancelled") return undefined;
        const optionId = res.outcome.optionId;
        if (optionId === REJECT_ALWAYS.optionId) {
          rejected.add(subjectKey(req));
          return { by: "host", decision: "deny", message: "the user chose to always reject this call" };
        }
        const picked = req.options.find((o) => OPTIONS[o].optionId === optionId);
        return picked ? { by: "host", decision: picked } : { by: "unavailable", why: `the editor answered with an unknown option` };
      } catch (err) {
        if (signal.aborted) return undefined;
        return { by: "unavailable", why: `the editor could not be asked: ${errorMessage(err)}` };
      } finally {
        signal.removeEventListener("abort", onAbort);
      }
    },
  };
}
