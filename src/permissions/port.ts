/**
 * How a wire layer answers approvals: rpc/ writes tool_approval_request and waits for
 * tool_approval_response, ACP will use session/request_permission; json and print mode
 * have nobody to ask. Nothing here knows a wire format.
 */

export const APPROVAL_OPTIONS = ["allow", "allow_always", "deny"] as const;
export type ApprovalDecision = (typeof APPROVAL_OPTIONS)[number];

/** One call waiting for a yes or no. */
export interface ApprovalRequest {
  toolCallId: string;
  toolName: string;
  args: Record<string, unknown>;
  /** Why approval is needed (the mode or the rule that asks). */
  reason: string;
  options: ApprovalDecision[];
}

export type ApprovalAnswer =
  | { by: "host"; decision: ApprovalDecision; message?: string }
  /** Nobody can answer (json and print mode, or the host went away); `why` is for the model. */
  | { by: "unavailable"; why: string };

export interface ApprovalPort {
  /**
   * Ask about one call. Resolves with the answer, or with undefined once `signal` aborts
   * first (the run was aborted or the wait timed out): the port then forgets the request,
   * and a late answer to it is ignored. Never rejects.
   */
  request(req: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer | undefined>;
}

/** The port of the modes that cannot ask anyone. */
export function unavailablePort(why: string): ApprovalPort {
  return { request: async () => ({ by: "unavailable", why }) };
}
