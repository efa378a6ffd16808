import { allowedByRules, ruleMatches, type PermissionMode, type Rule, type Subject } from "./rules.ts";

/** The facts about one validated tool call that the decision needs. */
export interface CallFacts {
  toolName: string;
  /** Declared by the tool (`annotations.readOnlyHint`, MCP's name for it). */
  readOnly: boolean;
  subject: Subject | undefined;
}

/**
 * What the mode and rules say about a call. `by: "mode"` with `allow` is the mode's
 * default (auto mode, or a read-only tool): not a decision worth recording.
 */
export type Verdict =
  | { action: "allow"; by: "mode" | "rule"; rule?: Rule }
  | { action: "deny"; by: "mode" | "rule"; rule?: Rule; reason: string }
  | { action: "ask"; rule?: Rule; reason: string };

/**
 * The decision for one call, pure: a matching `deny` rule refuses; read-only mode refuses
 * every tool not marked read-only; then an `ask` rule asks; an `allow` rule runs; and the
 * mode decides the rest (`ask` mode asks for every tool not marked read-only).
 */
export function decide(mode: PermissionMode, rules: readonly Rule[], call: CallFacts, cwd: string): Verdict {
  const matching = (kind: "deny" | "ask") => rules.find((r) => r.kind === kind && ruleMatches(r, call.toolName, call.subject, cwd));
  const deny = matching("deny");
  if (deny) return { action: "deny", by: "rule", rule: deny, reason: `Tool call denied by the permission rule "deny ${deny.text}" (${deny.source})${because(deny, call)}. Nothing ran.` };
  if (mode === "read-only" && !call.readOnly) {
    return {
      action: "deny",
      by: "mode",
      reason: `Tool call refused: pion runs in read-only permission mode, where only tools marked read-only (such as read, grep, find and ls) run, and ${call.toolName} is not one of them. Nothing ran.`,
    };
  }
  const ask = matching("ask");
  if (ask) return { action: "ask", rule: ask, reason: `the permission rule "ask ${ask.text}" (${ask.source}) asks for approval${because(ask, call)}` };
  const allow = allowedByRules(rules, call.toolName, call.subject, cwd);
  if (allow) return { action: "allow", by: "rule", rule: allow };
  if (mode === "ask" && !call.readOnly) {
    const unchecked = unanalysable(call);
    if (unchecked !== undefined) return { action: "ask", reason: `ask mode: the bash line could not be checked (${unchecked}), so no rule can allow it` };
    return { action: "ask", reason: `ask mode: ${call.toolName} is not marked read-only and no rule allows this call${writesNote(call)}` };
  }
  return { action: "allow", by: "mode" };
}

function unanalysable(call: CallFacts): string | undefined {
  return call.subject?.kind === "command" ? call.subject.analysis.unanalysable : undefined;
}

/** Why a rule on commands matched a line that cannot be analysed; the files the line writes, for a rule on paths. */
function because(rule: Rule, call: CallFacts): string {
  const s = call.subject;
  if (s?.kind !== "command" || rule.pattern === undefined) return "";
  const unchecked = s.analysis.unanalysable;
  if (rule.tool.test(call.toolName) && unchecked !== undefined) {
    return `: the bash line could not be checked (${unchecked}), and a line that cannot be checked counts as matching every rule that denies or asks`;
  }
  return rule.tool.test(call.toolName) ? "" : `: the line writes ${writtenFiles(call)}`;
}

function writesNote(call: CallFacts): string {
  const s = call.subject;
  return s?.kind === "command" && s.writes.length > 0 ? ` (it writes ${writtenFiles(call)}, which only write or edit rules can allow)` : "";
}

function writtenFiles(call: CallFacts): string {
  const s = call.subject;
  if (s?.kind !== "command") return "";
  return s.writes.map((w) => (w.kind === "unknown" ? `${w.source} (known only when it runs)` : w.paths[0])).join(", ");
}
