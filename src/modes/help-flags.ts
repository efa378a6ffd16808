import { discoverExtensions } from "../extensions/discover.ts";
import type { ExtensionSessionPort, RegisteredFlag } from "../extensions/types.ts";

/**
 * For `--help`: the flags the extensions a run would load register (as the reference lists them).
 * The extensions' factories run against a port with no session behind it: what they would do to
 * a session fails with a clear message, frames are dropped (load errors still reach stderr).
 */
export async function extensionFlagsForHelp(o: { home: string; cwd: string; extensions: string[]; noExtensions: boolean }): Promise<RegisteredFlag[]> {
  const paths = discoverExtensions({ home: o.home, cwd: o.cwd, extra: o.extensions, noDiscovery: o.noExtensions });
  if (paths.length === 0) return [];
  const { loadExtensions } = await import("../extensions/loader.ts");
  return (await loadExtensions(paths, helpPort(o.cwd))).registeredFlags();
}

function helpPort(cwd: string): ExtensionSessionPort {
  const none = () => {
    throw new Error("there is no session while pion prints its help");
  };
  return {
    cwd,
    mode: "print",
    hasUI: false,
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
