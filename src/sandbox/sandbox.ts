import { chmodSync, closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, sep } from "node:path";
import { errorMessage } from "../util/errors.ts";
import { bwrapArgs, protectedPaths } from "./bwrap.ts";
import type { SandboxPolicy } from "./config.ts";
import { explainFailure, findBwrap, NOT_INSTALLED, TOO_OLD, versionOk, type Probe } from "./probe.ts";
import { seccompFilter } from "./seccomp.ts";

/** The descriptor bwrap reads the seccomp program from (the command's fourth stdio slot). */
const SECCOMP_FD = 3;

/** A command ready to start inside the sandbox: `stdio[3]` must be `fds[0]`, closed by `release` once spawned. */
export interface Wrapped {
  argv: string[];
  env: Record<string, string>;
  fds: number[];
  release(): void;
}

/**
 * The sandbox of one session: its policy, its private /tmp (kept between the session's commands,
 * removed when pion exits), and the probe that tells whether bwrap can start here (run once).
 */
export class Sandbox {
  private probing: Promise<Probe> | undefined;
  private dir: string | undefined;
  private bwrap: string | undefined;

  /** Set by compose when a host can be asked: whether a refused command may run again outside (bash.ts). */
  rerunOutside?: (callId: string, command: string, signal: AbortSignal) => Promise<boolean>;

  constructor(readonly policy: SandboxPolicy) {}

  /** Whether bwrap starts a sandbox of this policy here; the first call runs `true` inside one. */
  probe(): Promise<Probe> {
    this.probing ??= this.runProbe().then((p) => {
      if (!p.ok) for (const f of this.listeners) f(p);
      return p;
    });
    return this.probing;
  }

  private readonly listeners: ((p: Extract<Probe, { ok: false }>) => void)[] = [];

  /** Called once, when the probe finds that the sandbox cannot start. */
  onUnavailable(f: (p: Extract<Probe, { ok: false }>) => void): void {
    this.listeners.push(f);
  }

  private async runProbe(): Promise<Probe> {
    const bwrap = findBwrap(this.policy.bwrapPath, this.policy.cwd);
    if (!bwrap) return { ok: false, ...NOT_INSTALLED };
    let version: { ok: boolean; version: string };
    try {
      const v = Bun.spawn([bwrap, "--version"], { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
      version = versionOk(`${await new Response(v.stdout).text()} ${await new Response(v.stderr).text()}`);
      await v.exited;
    } catch (err) {
      return { ok: false, why: `${bwrap} could not run (${errorMessage(err)})`, remedy: NOT_INSTALLED.remedy };
    }
    if (!version.ok) return { ok: false, ...TOO_OLD(version.version) };
    this.bwrap = bwrap;
    let w: Wrapped;
    try {
      w = this.wrap(["true"], {});
    } catch (err) {
      return { ok: false, why: errorMessage(err), remedy: "install libseccomp2 (Debian/Ubuntu: apt install libseccomp2)" };
    }
    try {
      const p = Bun.spawn(w.argv, { env: w.env, stdio: ["ignore", "ignore", "pipe", w.fds[0]!] });
      w.release();
      const [stderr, code] = await Promise.all([new Response(p.stderr as ReadableStream<Uint8Array>).text(), p.exited]);
      if (code !== 0) return { ok: false, ...explainFailure(stderr) };
    } catch (err) {
      w.release();
      return { ok: false, ...explainFailure(errorMessage(err)) };
    }
    return { ok: true, bwrap, version: version.version };
  }

  /**
   * `argv` (a command and its arguments) inside the sandbox, with `env` plus what says so to
   * the command (`PION_SANDBOX`, `PION_SANDBOX_NETWORK`, `TMPDIR=/tmp`). Only after a probe
   * that succeeded (or during it).
   */
  wrap(argv: string[], env: Record<string, string>): Wrapped {
    if (!this.bwrap) throw new Error("the sandbox was not probed");
    const { filter, tmp } = this.files();
    const fd = openSync(filter, "r");
    let open = true;
    return {
      argv: [this.bwrap, ...bwrapArgs(this.policy, tmp, SECCOMP_FD), ...argv],
      env: { ...env, ...this.markers() },
      fds: [fd],
      release() {
        if (open) closeSync(fd);
        open = false;
      },
    };
  }

  /** What the command's environment says of the sandbox (also what test suites may read). */
  markers(): Record<string, string> {
    return { PION_SANDBOX: this.policy.mode, PION_SANDBOX_NETWORK: this.policy.network ? "on" : "off", TMPDIR: "/tmp" };
  }

  /** The session's folder: the seccomp program and the private /tmp. */
  private files(): { filter: string; tmp: string } {
    if (!this.dir) {
      const dir = mkdtempSync(join(tmpdir(), "pion-sandbox-"));
      chmodSync(dir, 0o700);
      mkdirSync(join(dir, "tmp"), { mode: 0o700 });
      writeFileSync(join(dir, "seccomp.bpf"), seccompFilter(), { mode: 0o600 });
      process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
      this.dir = dir;
    }
    return { filter: join(this.dir, "seccomp.bpf"), tmp: join(this.dir, "tmp") };
  }

  /** One line for the model after a command the sandbox may have refused: where it ran and what is out of reach. */
  note(): string {
    const p = this.policy;
    const writes = p.writable.length > 0 ? `only ${p.writable.join(", ")} and a private /tmp are writable` : "nothing but a private /tmp is writable";
    return `[sandbox] This command ran in pion's ${p.mode} sandbox: ${writes}${p.network ? "" : ", the network is off"}, Unix sockets cannot be opened, and credential folders (~/.ssh, ~/.aws, pion's home, ...) are empty.`;
  }

  /** Why a file tool may not write `real` (symlinks resolved), or undefined when it may. */
  refusesWrite(real: string): string | undefined {
    const p = this.policy;
    const inside = (root: string) => real === root || real.startsWith(root.endsWith(sep) ? root : root + sep);
    const prot = protectedPaths(p);
    if (!p.writable.some(inside)) {
      return `pion's ${p.mode} sandbox refuses the write: ${real} is outside the writable folders (${p.writable.length > 0 ? p.writable.join(", ") : "none in read-only mode"}). Nothing was written.`;
    }
    const kept = [...prot.kept, ...prot.hiddenDirs, ...prot.hiddenFiles].find(inside);
    if (kept) return `pion's ${p.mode} sandbox keeps ${kept} read-only. Nothing was written.`;
    return undefined;
  }

  /** Why a file tool may not read `real`, or undefined when it may: the folders hidden from commands are hidden from it too. */
  refusesRead(real: string): string | undefined {
    const prot = protectedPaths(this.policy);
    const inside = (root: string) => real === root || real.startsWith(root + sep);
    const hidden = [...prot.hiddenDirs, ...prot.hiddenFiles].find(inside);
    return hidden ? `pion's ${this.policy.mode} sandbox hides ${hidden} from the model's tools. Nothing was read.` : undefined;
  }
}
