import { homedir } from "node:os";
import { loadSettings, loadUserSettings } from "../config.ts";
import { userConfigDirs } from "../config-dirs.ts";
import { decideProjectTrust } from "../trust/project-trust.ts";
import { errorMessage } from "../util/errors.ts";

/**
 * `pion sandbox check [--mode read-only|workspace-write] [--json]`: probes the sandbox the
 * settings ask for here (workspace-write when they ask for none) and prints the result; exit 0
 * when it starts, 3 when it cannot (as a sandboxed run would stop), 2 for a usage error.
 */
export async function runSandboxCli(
  argv: string[],
  o: { home: string; cwd: string; out: (s: string) => void; err: (s: string) => void },
): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== "check") {
    o.err(`pion: usage: pion sandbox check [--mode read-only|workspace-write] [--json]\n`);
    return 2;
  }
  let json = false;
  let mode: string | undefined;
  for (let i = 0; i < rest.length; i++) {
    if (rest[i] === "--json") json = true;
    else if (rest[i] === "--mode") mode = rest[++i];
    else {
      o.err(`pion: Unknown option for pion sandbox check: ${rest[i]}\n`);
      return 2;
    }
  }
  try {
    const user = loadUserSettings(o.home);
    const trust = decideProjectTrust({ home: o.home, cwd: o.cwd, defaultProjectTrust: user.defaultProjectTrust });
    const settings = loadSettings(o.home, o.cwd, trust.trusted, () => {}, user);
    const { sandboxPolicy } = await import("../sandbox/config.ts");
    const wanted = mode ?? (settings.sandbox?.mode && settings.sandbox.mode !== "off" ? settings.sandbox.mode : "workspace-write");
    const policy = sandboxPolicy({ user: settings.sandbox, project: settings.projectSandbox, cliMode: wanted, cwd: o.cwd, pionHome: o.home, configDirs: userConfigDirs(o.home), userHome: homedir() });
    if (!policy) throw new Error("the sandbox mode to check must be read-only or workspace-write");
    const { Sandbox } = await import("../sandbox/sandbox.ts");
    const probe = await new Sandbox(policy).probe();
    if (json) o.out(`${JSON.stringify({ mode: policy.mode, network: policy.network, writable: policy.writable, ...probe })}\n`);
    else if (probe.ok) o.out(`sandbox ${policy.mode}: available (${probe.bwrap}, bubblewrap ${probe.version}); writable: ${policy.writable.join(", ") || "nothing but a private /tmp"}; network ${policy.network ? "on" : "off"}\n`);
    else o.out(`sandbox ${policy.mode}: unavailable: ${probe.why}\nremedy: ${probe.remedy}\n`);
    return probe.ok ? 0 : 3;
  } catch (err) {
    o.err(`pion: ${errorMessage(err)}\n`);
    return 2;
  }
}
