import { loadSettings, loadUserSettings } from "../config.ts";
import { extensionsToLoad } from "./compose-resources.ts";
import { withPackageResources } from "./compose-settings.ts";
import { decideProjectTrust } from "../trust/project-trust.ts";
import type { ExtensionSessionPort, RegisteredFlag } from "../extensions/types.ts";

/**
 * For `--help`: the flags the extensions a run would load register (as the reference lists them).
 * The extensions' factories run against a port with no session behind it: what they would do to
 * a session fails with a clear message, frames are dropped (load errors still reach stderr).
 */
export async function extensionFlagsForHelp(o: {
  home: string;
  cwd: string;
  extensions: string[];
  noExtensions: boolean;
  approve?: boolean;
}): Promise<RegisteredFlag[]> {
  // The folder's own extensions count only when a run would load them (a trusted folder).
  const user = loadUserSettings(o.home);
  const trust = decideProjectTrust({ home: o.home, cwd: o.cwd, approve: o.approve, defaultProjectTrust: user.defaultProjectTrust });
  const settings = await withPackageResources(loadSettings(o.home, o.cwd, trust.trusted, () => {}, user));
  const paths = extensionsToLoad({ ...o, env: process.env }, trust.trusted, settings);
  if (paths.length === 0) return [];
  const { loadExtensions } = await import("../extensions/loader.ts");
  return (await loadExtensions(paths, helpPort(o.cwd, trust.trusted))).registeredFlags();
}

function helpPort(cwd: string, projectTrusted: boolean): ExtensionSessionPort {
  const none = () => {
    throw new Error("there is no session while pion prints its help");
  };
  return {
    cwd,
    mode: "print",
    hasUI: false,
    projectTrusted,
    hasPendingMessages: () => false,
    model: () => undefined,
    isIdle: () => true,
    abort: () => {},
    shutdown: () => {},
    sendMessage: none,
    sendUserMessage: none,
    appendEntry: none,
    setSessionName: none,
    getSessionName: () => undefined,
    setLabel: none,
    writeFrame: () => {},
  };
}
