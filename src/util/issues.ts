import type * as v from "valibot";

/** One line naming the first bad field and what it expected. */
export function describeIssues(issues: readonly v.BaseIssue<unknown>[]): string {
  const issue = issues[0];
  if (!issue) return "invalid value";
  const path = issue.path?.map((p) => String(p.key)).join(".");
  const received = issue.received === "undefined" ? "nothing" : issue.received;
  if (issue.kind === "schema" && issue.expected) {
    return path
      ? `Invalid field "${path}": expected ${issue.expected}, received ${received}`
      : `Invalid value: expected ${issue.expected}, received ${received}`;
  }
  return path ? `Invalid field "${path}": ${issue.message}` : issue.message;
}
