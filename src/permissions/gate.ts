import type { Entry, PermissionEntry } from "../store/entries.ts";
import type { ToolAnnotations } from "../tools/tool.ts";
import { decide, type CallFacts } from "./policy.ts";
import { APPROVAL_OPTIONS, unavailablePort, type ApprovalAnswer, type ApprovalPort } from "./port.ts";
import { alwaysRulesFor, parseRule, subjectOf, type PermissionMode, type Rule } from "./rules.ts";

export type PermissionRecord = Omit<PermissionEntry, "id" | "parentId" | "timestamp">;

/** What the gate needs of the session it guards. */
export interface PermissionHost {
  cwd: string;
  sessionId(): string;
  /** The session's entries: earlier allow_always answers are permission entries with addedRules. */
  entries(): readonly Entry[];
  /** Commit a decision entry (and announce it); resolved before the call goes on. */
  record(entry: PermissionRecord): void | Promise<void>;
}

export interface PermissionConfig {
  mode: PermissionMode;
  /** From settings and the command line, in that order. */
  rules: Rule[];
  /** How long a request may wait for an answer before it counts as denied; none by default. */
  timeoutMs?: number;
}

export type GateResult = { allow: true } | { allow: false; reason: string };

/**
 * Decides, for one validated tool call at a time, whether it runs: mode and rules first
 * (policy.ts), then the approval port when they ask. A refusal's reason is what the model
 * gets as the call's error result. Calls are checked one at a time in call order (the
 * loop sees to it), so an allow_always answer already covers the calls after it.
 */
export class PermissionGate {
  /** Answers requests; until a wire layer sets one, nobody can approve. */
  port: ApprovalPort = unavailablePort("no one can approve tool calls in this mode");
  mode: PermissionMode;
  private readonly rules: Rule[];
  private readonly timeoutMs: number | undefined;
  private session: { id: string; rules: Rule[] } | undefined;

  constructor(
    config: PermissionConfig,
    private readonly host: PermissionHost,
  ) {
    this.mode = config.mode;
    this.rules = config.rules;
    this.timeoutMs = config.timeoutMs;
  }

  async check(call: { id: string; name: string }, args: Record<string, unknown>, tool: { annotations?: ToolAnnotations }, signal: AbortSignal): Promise<GateResult> {
    // Auto mode without deny or ask rules: everything runs, nothing to look at.
    if (this.mode === "auto" && !this.rules.some((r) => r.kind !== "allow")) return { allow: true };
    const cwd = this.host.cwd;
    const subject = subjectOf(call.name, args, cwd);
    const facts: CallFacts = { toolName: call.name, readOnly: tool.annotations?.readOnlyHint === true, subject };
    const rules = this.mode === "auto" ? this.rules : [...this.rules, ...this.sessionRules()];
    const verdict = decide(this.mode, rules, facts, cwd);
    const base = {
      type: "permission" as const,
      toolCallId: call.id,
      toolName: call.name,
      ...(subject ? { subject: subject.kind === "command" ? subject.command : String(args.path ?? ".") } : {}),
      mode: this.mode,
      ...(verdict.rule ? { rule: `${verdict.rule.kind} ${verdict.rule.text}` } : {}),
    };
    if (verdict.action === "deny") {
      await this.host.record({ ...base, decision: "deny", by: verdict.by, reason: verdict.reason });
      return { allow: false, reason: verdict.reason };
    }
    if (verdict.action === "allow") {
      // Worth recording only when the rule spared a request.
      if (verdict.by === "rule" && this.mode === "ask" && !facts.readOnly) {
        await this.host.record({ ...base, decision: "allow", by: "rule", reason: `allowed by the permission rule "allow ${verdict.rule!.text}" (${verdict.rule!.source})` });
      }
      return { allow: true };
    }
    // An ask rule outranks allow rules, so an allow_always answer could not stop it asking: not offered then.
    const options = verdict.rule ? APPROVAL_OPTIONS.filter((o) => o !== "allow_always") : [...APPROVAL_OPTIONS];
    const answer = await this.ask({ toolCallId: call.id, toolName: call.name, args, reason: verdict.reason, options }, signal);
    if ("refused" in answer) {
      await this.host.record({ ...base, decision: "deny", by: answer.by, reason: answer.refused, ...(answer.message ? { message: answer.message } : {}) });
      return { allow: false, reason: answer.refused };
    }
    const added = answer.decision === "allow_always" && options.includes("allow_always") ? alwaysRulesFor(call.name, args) : [];
    for (const text of added) this.sessionRules().push(parseRule("allow", text, "session"));
    await this.host.record({
      ...base,
      decision: "allow",
      by: "host",
      reason: verdict.reason,
      ...(answer.message ? { message: answer.message } : {}),
      ...(added.length > 0 ? { addedRules: added } : {}),
    });
    return { allow: true };
  }

  /** The port's answer, or why the call is refused without one (abort, timeout, nobody to ask, a no). */
  private async ask(
    req: Parameters<ApprovalPort["request"]>[0],
    signal: AbortSignal,
  ): Promise<{ decision: "allow" | "allow_always"; message?: string } | { refused: string; by: PermissionEntry["by"]; message?: string }> {
    const stop = new AbortController();
    let why: "abort" | "timeout" | undefined;
    const onAbort = () => {
      why ??= "abort";
      stop.abort();
    };
    signal.addEventListener("abort", onAbort, { once: true });
    if (signal.aborted) onAbort();
    const timer =
      this.timeoutMs !== undefined
        ? setTimeout(() => {
            why ??= "timeout";
            stop.abort();
          }, this.timeoutMs)
        : undefined;
    let answer: ApprovalAnswer | undefined;
    try {
      answer = stop.signal.aborted ? undefined : await this.port.request(req, stop.signal);
    } finally {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
    }
    if (!answer) {
      return why === "timeout"
        ? { by: "timeout", refused: `Tool call denied: no approval arrived within ${this.timeoutMs} ms. Nothing ran.` }
        : { by: "abort", refused: "Tool call denied: the run was aborted while the call waited for approval. Nothing ran." };
    }
    if (answer.by === "unavailable") {
      return {
        by: "unavailable",
        refused: `Tool call denied: it needs approval (${req.reason}), but approval is unavailable: ${answer.why}. Nothing ran. Go on without this call, or say what you need and why.`,
      };
    }
    if (answer.decision === "deny") {
      const refused = `Tool call denied by the user${answer.message ? `: ${answer.message}` : "."} Nothing ran.`;
      return { by: "host", refused, ...(answer.message ? { message: answer.message } : {}) };
    }
    return { decision: answer.decision, ...(answer.message ? { message: answer.message } : {}) };
  }

  /** Allow rules earlier allow_always answers of this session added (read from its entries once per session). */
  private sessionRules(): Rule[] {
    const id = this.host.sessionId();
    if (this.session?.id !== id) {
      const rules: Rule[] = [];
      for (const e of this.host.entries()) {
        if (e.type !== "permission" || !e.addedRules) continue;
        for (const text of e.addedRules) {
          try {
            rules.push(parseRule("allow", text, "session"));
          } catch {
            // a hand-edited entry with a rule pion cannot read grants nothing
          }
        }
      }
      this.session = { id, rules };
    }
    return this.session.rules;
  }
}
