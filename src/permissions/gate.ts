import type { PermissionEntry } from "../store/entries.ts";
import type { ToolAnnotations } from "../tools/tool.ts";
import { decide, type CallFacts } from "./policy.ts";
import { APPROVAL_OPTIONS, unavailablePort, type ApprovalAnswer, type ApprovalPort } from "./port.ts";
import { alwaysRulesFor, parseRule, type PermissionMode, type Rule, type Subject } from "./rules.ts";
import { loadBashParser } from "./shell/parser.ts";
import { subjectOf } from "./subject.ts";

export type PermissionRecord = Omit<PermissionEntry, "id" | "parentId" | "timestamp">;

/** What the gate needs of the session it guards. */
export interface PermissionHost {
  cwd: string;
  sessionId(): string;
  /**
   * The allow rules earlier allow_always answers granted in the session, as this pion recorded
   * them (`record`), never as entries say: a permission entry with addedRules in a session file
   * from elsewhere grants nothing.
   */
  grantedRules(): readonly string[];
  /**
   * Commit a decision entry (and announce it); resolved before the call goes on. Its addedRules
   * are granted in the same commit: what `grantedRules` answers from then on.
   */
  record(entry: PermissionRecord): void | Promise<void>;
}

export interface PermissionConfig {
  mode: PermissionMode;
  /** From settings and the command line, in that order. */
  rules: Rule[];
  /** How long a request may wait for an answer before it counts as denied; none by default. */
  timeoutMs?: number;
  /**
   * pion's sandbox, when one is on: a bash call while it cannot start here needs the host's
   * approval to run without it (never allow_always), whatever the mode and rules allow.
   */
  sandbox?: { mode: string; probe(): Promise<{ ok: true } | { ok: false; why: string; remedy: string }> };
}

/**
 * `checkedPath`: for a file tool, the path the rules judged, symlinks resolved; the tool
 * writes there, and only while the path still resolves to it.
 */
export type GateResult = { allow: true; checkedPath?: string; sandboxWaived?: true } | { allow: false; reason: string };

/** A host's answer to a request, or why the call is refused without one. */
type Answer = { decision: "allow" | "allow_always"; message?: string } | { refused: string; by: PermissionEntry["by"]; message?: string };

function allowed(subject: Subject | undefined, waived: boolean): GateResult {
  const w = waived ? { sandboxWaived: true as const } : {};
  if (subject?.kind !== "path" || subject.unresolved) return { allow: true, ...w };
  return { allow: true, checkedPath: subject.paths[subject.paths.length - 1]!, ...w };
}

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
  private readonly sandbox: PermissionConfig["sandbox"];
  private session: { id: string; rules: Rule[] } | undefined;
  private prepared = false;

  constructor(
    config: PermissionConfig,
    private readonly host: PermissionHost,
  ) {
    this.mode = config.mode;
    this.rules = config.rules;
    this.timeoutMs = config.timeoutMs;
    this.sandbox = config.sandbox;
  }

  /**
   * Called when a run starts: when these rules will judge bash lines, the shell parser starts
   * loading in the background (about 20 ms), beside the run's first model request. Never at
   * start-up; a failure here is the first judged line's (it fails closed there).
   */
  prepare(): void {
    if (this.prepared || this.judgesNothing()) return;
    this.prepared = true;
    void loadBashParser().catch(() => {});
  }

  async check(call: { id: string; name: string }, args: Record<string, unknown>, tool: { annotations?: ToolAnnotations }, signal: AbortSignal): Promise<GateResult> {
    const sandboxed = this.sandbox !== undefined && call.name === "bash";
    // Nothing to look at but, for bash, whether the sandbox starts.
    if (this.judgesNothing() && !sandboxed) return { allow: true };
    const cwd = this.host.cwd;
    const subject = await subjectOf(call.name, args, cwd);
    const facts: CallFacts = { toolName: call.name, readOnly: tool.annotations?.readOnlyHint === true, subject };
    const rules = this.mode === "auto" ? this.rules : [...this.rules, ...this.sessionRules()];
    let verdict = decide(this.mode, rules, facts, cwd);
    const probe = sandboxed && verdict.action !== "deny" ? await this.sandbox!.probe() : undefined;
    const waived = probe?.ok === false;
    if (probe?.ok === false) {
      verdict = {
        action: "ask",
        reason: `sandbox: pion's ${this.sandbox!.mode} sandbox cannot start here (${probe.why}; ${probe.remedy}); allowing runs this command without it`,
      };
    }
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
      return allowed(subject, false);
    }
    // An ask rule outranks allow rules, and no rule matches a line that cannot be analysed, so an
    // allow_always answer could not stop either asking: not offered then.
    const unanalysable = subject?.kind === "command" && subject.analysis.unanalysable !== undefined;
    const options = verdict.rule || unanalysable || waived ? APPROVAL_OPTIONS.filter((o) => o !== "allow_always") : [...APPROVAL_OPTIONS];
    const answer = await this.ask({ toolCallId: call.id, toolName: call.name, args, reason: verdict.reason, options }, signal);
    if ("refused" in answer) {
      await this.recordAnswer(base, answer, verdict.reason);
      return { allow: false, reason: answer.refused };
    }
    const added = answer.decision === "allow_always" && options.includes("allow_always") ? alwaysRulesFor(call.name, args, subject) : [];
    for (const text of added) this.sessionRules().push(parseRule("allow", text, "session"));
    await this.recordAnswer(base, answer, verdict.reason, added);
    return allowed(subject, waived);
  }

  /** Auto mode without deny or ask rules: every call runs as it would without a gate. */
  private judgesNothing(): boolean {
    return this.mode === "auto" && !this.rules.some((r) => r.kind !== "allow");
  }

  /** The host's answer (or why there was none) as a decision entry; `allowReason` is the allowed call's. */
  private recordAnswer(base: Omit<PermissionRecord, "decision" | "by" | "reason">, answer: Answer, allowReason: string, added: string[] = []): void | Promise<void> {
    const message = answer.message ? { message: answer.message } : {};
    if ("refused" in answer) return this.host.record({ ...base, decision: "deny", by: answer.by, reason: answer.refused, ...message });
    return this.host.record({ ...base, decision: "allow", by: "host", reason: allowReason, ...message, ...(added.length > 0 ? { addedRules: added } : {}) });
  }

  /**
   * Ask mode only: whether the host lets a bash command the sandbox refused run again outside it
   * (a tool_approval_request with reason "sandbox", allow or deny). The answer is a decision entry.
   * Never in another mode, and never where nobody can answer (JSON and print mode).
   */
  async allowOutsideSandbox(call: { id: string; name: string }, args: Record<string, unknown>, signal: AbortSignal): Promise<boolean> {
    if (this.mode !== "ask") return false;
    const answer = await this.ask({ toolCallId: call.id, toolName: call.name, args, reason: "sandbox", options: ["allow", "deny"] }, signal);
    if ("refused" in answer && answer.by === "unavailable") return false;
    const base = { type: "permission" as const, toolCallId: call.id, toolName: call.name, subject: String(args.command ?? ""), mode: this.mode };
    await this.recordAnswer(base, answer, "sandbox: run again outside the sandbox");
    return !("refused" in answer);
  }

  /** The port's answer, or why the call is refused without one (abort, timeout, nobody to ask, a no). */
  private async ask(req: Parameters<ApprovalPort["request"]>[0], signal: AbortSignal): Promise<Answer> {
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

  /** Allow rules earlier allow_always answers of this session granted (the host's grantedRules, read once per session). */
  private sessionRules(): Rule[] {
    const id = this.host.sessionId();
    if (this.session?.id !== id) {
      const rules: Rule[] = [];
      for (const text of this.host.grantedRules()) {
        try {
          rules.push(parseRule("allow", text, "session"));
        } catch {
          // a rule this pion cannot read (granted by another version of it) grants nothing
        }
      }
      this.session = { id, rules };
    }
    return this.session.rules;
  }
}
