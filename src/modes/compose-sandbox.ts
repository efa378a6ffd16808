import { homedir } from "node:os";
import type { Settings } from "../config.ts";
import { userConfigDirs } from "../config-dirs.ts";
import type { Sandbox } from "../sandbox/sandbox.ts";

/**
 * The session's sandbox from settings `sandbox`, the project's narrowing, `--sandbox` and the
 * host's additional directories (writable beside the cwd in workspace-write mode); its
 * code loads only when it is on. Throws a one-line message for a mode that does not exist.
 */
export async function composeSandbox(
  o: { cwd: string; home: string; env: Record<string, string | undefined>; sandbox?: string; additionalDirectories?: string[] },
  settings: Settings,
): Promise<Sandbox | undefined> {
  const { sandboxPolicy } = await import("../sandbox/config.ts");
  const policy = sandboxPolicy({
    user: settings.sandbox,
    project: settings.projectSandbox,
    cliMode: o.sandbox,
    cwd: o.cwd,
    pionHome: o.home,
    configDirs: userConfigDirs(o.home, o.env),
    userHome: homedir(),
    extraRoots: o.additionalDirectories,
  });
  if (!policy) return undefined;
  const { Sandbox } = await import("../sandbox/sandbox.ts");
  return new Sandbox(policy);
}
