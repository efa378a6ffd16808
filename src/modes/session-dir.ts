import { resolve } from "node:path";
import { loadSettings, loadUserSettings, type Settings } from "../config.ts";
import { decideProjectTrust } from "../trust/project-trust.ts";
import { expandHome } from "../util/home-path.ts";

interface SessionDirOptions {
  home: string;
  cwd: string;
  env: Record<string, string | undefined>;
  approve?: boolean;
  /** `--session-dir`, else `PION_SESSION_DIR` / `PI_CODING_AGENT_SESSION_DIR`: both win over the setting. */
  sessionDir?: string;
}

/**
 * `o` with the settings' `sessionDir` filled in when neither the command line nor the
 * environment named one (a relative path resolves from the cwd, a leading `~` from the home
 * folder). Unlike the reference, which reads it before deciding trust, a project's value counts
 * only when the project is trusted: an untrusted checkout must not choose where sessions go.
 */
export function withSettingsSessionDir<T extends SessionDirOptions>(o: T, settings?: Settings): T {
  if (o.sessionDir !== undefined) return o;
  const value = (settings ?? settingsFor(o)).sessionDir;
  if (!value) return o;
  return { ...o, sessionDir: resolve(o.cwd, expandHome(value)) };
}

function settingsFor(o: SessionDirOptions): Settings {
  const user = loadUserSettings(o.home, o.env);
  const trust = decideProjectTrust({ home: o.home, cwd: o.cwd, approve: o.approve, defaultProjectTrust: user.defaultProjectTrust });
  return loadSettings(o.home, o.cwd, trust.trusted, () => {}, user);
}
