/**
 * Whether a folder's own resources (`projectPaths`) may load: the one decision every loader
 * of project resources asks (settings, extensions, skills, prompt templates, and MCP servers
 * once they exist). Context files (AGENTS.md / CLAUDE.md) are text for the model and are not
 * gated. Nothing inside the folder takes part in the decision, so a folder cannot trust itself.
 */
import { existsSync } from "node:fs";
import { relative } from "node:path";
import { allProjectPaths, projectPaths } from "../resources/project-paths.ts";
import { canonicalFolder, nearestDecision, readTrustDecisions, trustFilePath } from "./trust-store.ts";

/** `$PION_HOME/settings.json` `defaultProjectTrust`; in pion's non-interactive modes "ask" loads nothing. */
export type DefaultProjectTrust = "ask" | "always" | "never";

/** As get_state reports it: "none" when the folder has nothing that needs trust. */
export type ProjectTrustState = "trusted" | "untrusted" | "none";

export interface ProjectTrustInput {
  home: string;
  cwd: string;
  /** --approve (true) or --no-approve (false) for this run; the caller makes --no-approve win. */
  approve?: boolean;
  /** From the user's settings only, never the project's. */
  defaultProjectTrust?: DefaultProjectTrust;
}

export interface ProjectTrust {
  state: ProjectTrustState;
  /** true only when the folder's own resources load. */
  trusted: boolean;
  /** The folder decided for (canonical cwd). */
  folder: string;
  /** What decided, for the stderr notice; undefined when there is nothing to decide. */
  by?: { kind: "flag" } | { kind: "saved"; path: string } | { kind: "default"; value: DefaultProjectTrust };
  /** The folder's protected resources that exist, relative to the folder. */
  found: string[];
}

/**
 * The decision, first that applies: the command line; the decision saved for the folder or its
 * nearest parent in trust.json; `defaultProjectTrust` ("always" loads, "ask" and "never" do not).
 * A folder without protected resources is "none" and trust.json is not read.
 */
export function decideProjectTrust(input: ProjectTrustInput): ProjectTrust {
  const folder = canonicalFolder(input.cwd);
  const found = allProjectPaths(projectPaths(folder))
    .filter((p) => existsSync(p))
    .map((p) => relative(folder, p) || ".");
  if (found.length === 0) return { state: "none", trusted: false, folder, found };
  const decide = (trusted: boolean, by: NonNullable<ProjectTrust["by"]>): ProjectTrust => ({
    state: trusted ? "trusted" : "untrusted",
    trusted,
    folder,
    by,
    found,
  });
  if (input.approve !== undefined) return decide(input.approve, { kind: "flag" });
  const saved = nearestDecision(readTrustDecisions(input.home), folder);
  if (saved) return decide(saved.trusted, { kind: "saved", path: saved.path });
  const value = input.defaultProjectTrust ?? "ask";
  return decide(value === "always", { kind: "default", value });
}

/** The one stderr line for an untrusted folder: what was skipped, why, and how to trust it. */
export function skippedNotice(t: ProjectTrust, home: string): string | undefined {
  if (t.state !== "untrusted") return undefined;
  const why =
    t.by?.kind === "flag"
      ? "--no-approve was given"
      : t.by?.kind === "saved"
        ? `${t.by.path} is saved as not trusted in ${trustFilePath(home)}`
        : `the folder is not trusted (defaultProjectTrust: "${t.by?.kind === "default" ? t.by.value : "ask"}")`;
  const how = t.by?.kind === "flag" ? "" : ` To load them, run \`pion trust ${t.folder}\` or pass --approve for one run.`;
  return `skipped this folder's own resources (${t.found.join(", ")}) in ${t.folder}: ${why}.${how}`;
}
