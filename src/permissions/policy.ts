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
  if (deny) return { action: "deny", by: "rule", rule: deny, reason: `Tool call denied by the permission rule "deny ${deny.text}" (${deny.source}). Nothing ran.` };
  if (mode === "read-only" && !call.readOnly) {
    return {
      action: "deny",
      by: "mode",
      reason: `Tool call refused: pion runs in read-only permission mode, where only tools marked read-only (such as read, grep, find and ls) run, and ${call.toolName} is not one of them. Nothing ran.`,
    };
  }
  const ask = matching("ask");
  if (ask) return { action: "ask", rule: ask, reason: `the permission rule "ask ${ask.text}" (${ask.source}) asks for approval` };
  const allow = allowedByRules(rules, call.toolName, call.subject, cwd);
  if (allow) return { action: "allow", by: "rule", rule: allow };
  if (mode === "ask" && !call.readOnly) {
    return { action: "ask", reason: `ask mode: ${call.toolName} is not marked read-only and no rule allows this call` };
  }
  return { action: "allow", by: "mode" };
}
