import type { PermissionConfig } from "./gate.ts";
import { parseRule, type PermissionMode, type Rule, type RuleKind, type RuleSource } from "./rules.ts";

export interface PermissionSettings {
  mode?: PermissionMode;
  allow?: string[];
  ask?: string[];
  deny?: string[];
  timeoutMs?: number;
}

/**
 * Mode, rules and timeout from the user's settings, the project's deny rules (all a
 * project may add) and the command line (its mode wins; its rules add to the others).
 * Throws a one-line message naming a rule that cannot be read.
 */
export function permissionConfig(
  user: PermissionSettings | undefined,
  projectDeny: readonly string[] | undefined,
  cli: { mode?: PermissionMode; allow?: readonly string[]; deny?: readonly string[] },
): PermissionConfig {
  const rules: Rule[] = [];
  const add = (kind: RuleKind, texts: readonly string[] | undefined, source: RuleSource) => {
    for (const text of texts ?? []) rules.push(parseRule(kind, text, source));
  };
  add("deny", user?.deny, "settings");
  add("ask", user?.ask, "settings");
  add("allow", user?.allow, "settings");
  add("deny", projectDeny, "project settings");
  add("deny", cli.deny, "command line");
  add("allow", cli.allow, "command line");
  const config: PermissionConfig = { mode: cli.mode ?? user?.mode ?? "auto", rules };
  if (user?.timeoutMs !== undefined) config.timeoutMs = user.timeoutMs;
  return config;
}
