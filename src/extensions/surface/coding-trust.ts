/**
 * The reference's project-trust store and stored-credential reads, over pion's own: trust.json
 * in pion's home (src/trust/trust-store.ts), the project resources pion gates
 * (src/resources/project-paths.ts), and auth.json as pion reads it (src/credentials/auth-file.ts).
 */
import { existsSync, realpathSync } from "node:fs";
import { resolve } from "node:path";
import { pionHome } from "../../config.ts";
import { userConfigDirs, filesIn } from "../../config-dirs.ts";
import { readAuthFiles, type StoredCredential } from "../../credentials/auth-file.ts";
import { allProjectPaths, projectPaths } from "../../resources/project-paths.ts";
import { nearestDecision, readTrustDecisions, writeDecision } from "../../trust/trust-store.ts";
import { expandHome } from "../../util/home-path.ts";

/** A folder's path with symlinks resolved when it exists, else as given (made absolute). */
function canonical(path: string): string {
  const abs = resolve(expandHome(path));
  try {
    return realpathSync(abs);
  } catch {
    return abs;
  }
}

export type ProjectTrustDecision = boolean | null;

/** Saved trust decisions of `agentDir/trust.json`; a decision covers the folder and all below it. */
export class ProjectTrustStore {
  readonly #home: string;

  constructor(agentDir: string) {
    this.#home = resolve(expandHome(agentDir));
  }

  get(cwd: string): ProjectTrustDecision {
    return this.getEntry(cwd)?.decision ?? null;
  }

  /** The decision of the folder or its nearest parent that has one, and which folder that is. */
  getEntry(cwd: string): { path: string; decision: boolean } | null {
    const saved = nearestDecision(readTrustDecisions(this.#home), canonical(cwd));
    return saved ? { path: saved.path, decision: saved.trusted } : null;
  }

  /** Save `true` / `false`, or forget (`null`) the folder's own decision. */
  set(cwd: string, decision: ProjectTrustDecision): void {
    writeDecision(this.#home, canonical(cwd), decision);
  }

  setMany(decisions: { path: string; decision: ProjectTrustDecision }[]): void {
    for (const { path, decision } of decisions) this.set(path, decision);
  }
}

/** Whether the folder has any of the resources that load only when it is trusted. */
export function hasTrustRequiringProjectResources(cwd: string): boolean {
  return allProjectPaths(projectPaths(canonical(cwd))).some((p) => existsSync(p));
}

/**
 * A provider's entry of auth.json as stored (keys not resolved): from `authPath`, or else from
 * the files pion reads (its home's, then the reference's agent folder's; the first that has it).
 * Missing files, bad JSON and malformed entries are `undefined`.
 */
export function readStoredCredential(providerId: string, authPath?: string): StoredCredential | undefined {
  const paths = authPath ? [expandHome(authPath)] : filesIn(userConfigDirs(pionHome()), "auth.json").reverse();
  return readAuthFiles(paths, () => {}).get(providerId)?.credential;
}

export type CredentialSynchronizationOperation = "login" | "logout" | "setRuntimeApiKey" | "removeRuntimeApiKey";

/** A credential change that was saved, after which the in-process model and key state could not follow. */
export class CredentialSynchronizationError extends Error {
  readonly providerId: string;
  readonly operation: CredentialSynchronizationOperation;
  readonly credential: StoredCredential | undefined;

  constructor(providerId: string, operation: CredentialSynchronizationOperation, credential: StoredCredential | undefined, options?: ErrorOptions) {
    super(`Credential ${operation} committed for ${providerId}, but local synchronization failed`, options);
    this.name = "CredentialSynchronizationError";
    this.providerId = providerId;
    this.operation = operation;
    this.credential = credential;
  }
}
