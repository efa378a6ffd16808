import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bwrapArgs, protectedPaths } from "../../../src/sandbox/bwrap.ts";
import { sandboxPolicy } from "../../../src/sandbox/config.ts";
import { findBwrap, versionOk } from "../../../src/sandbox/probe.ts";

const dir = () => realpathSync(mkdtempSync(join(tmpdir(), "pion-sbx-unit-")));
const base = () => ({ cwd: dir(), pionHome: dir(), userHome: dir() });

describe("sandboxPolicy", () => {
  test("off by default; --sandbox wins; a project may only narrow", () => {
    const b = base();
    expect(sandboxPolicy({ ...b })).toBeUndefined();
    expect(sandboxPolicy({ ...b, user: { mode: "workspace-write" } })?.mode).toBe("workspace-write");
    // the project narrows: read-only over workspace-write, on over off; never wider
    expect(sandboxPolicy({ ...b, user: { mode: "workspace-write" }, project: { mode: "read-only" } })?.mode).toBe("read-only");
    expect(sandboxPolicy({ ...b, project: { mode: "workspace-write" } })?.mode).toBe("workspace-write");
    expect(sandboxPolicy({ ...b, user: { mode: "read-only" }, project: { mode: "off" } })?.mode).toBe("read-only");
    expect(sandboxPolicy({ ...b, user: { mode: "workspace-write", network: true }, project: { network: false } })?.network).toBe(false);
    expect(sandboxPolicy({ ...b, user: { mode: "read-only" }, cliMode: "off" })).toBeUndefined();
    expect(() => sandboxPolicy({ ...b, cliMode: "sometimes" })).toThrow(/Invalid sandbox mode/);
  });

  test("workspace-write: the cwd and writableRoots are writable; read-only: nothing", () => {
    const b = base();
    const extra = dir();
    expect(sandboxPolicy({ ...b, user: { mode: "workspace-write", writableRoots: [extra] } })?.writable).toEqual([b.cwd, extra]);
    expect(sandboxPolicy({ ...b, user: { mode: "read-only", writableRoots: [extra] } })?.writable).toEqual([]);
  });

  test("the host's extraRoots (ACP additionalDirectories) are writable after writableRoots in workspace-write, once each; never in read-only", () => {
    const b = base();
    const [extra, host] = [dir(), dir()];
    const p = (mode: "workspace-write" | "read-only") => sandboxPolicy({ ...b, user: { mode, writableRoots: [extra] }, extraRoots: [host, extra, b.cwd] })?.writable;
    expect(p("workspace-write")).toEqual([b.cwd, extra, host]);
    expect(p("read-only")).toEqual([]);
  });
});

describe("bwrapArgs", () => {
  test("read-only root, writable cwd, protected paths over it, hidden credentials, no network, seccomp", () => {
    const b = base();
    mkdirSync(join(b.cwd, ".git", "hooks"), { recursive: true });
    writeFileSync(join(b.cwd, ".git", "config"), "");
    mkdirSync(join(b.userHome, ".ssh"));
    const p = sandboxPolicy({ ...b, user: { mode: "workspace-write" } })!;
    const a = bwrapArgs(p, "/x/tmp", 3).join(" ");
    expect(a).toStartWith("--ro-bind / / --dev /dev --proc /proc --bind /x/tmp /tmp");
    expect(a).toContain(`--bind ${b.cwd} ${b.cwd}`);
    expect(a).toContain(`--ro-bind ${b.cwd}/.git/hooks ${b.cwd}/.git/hooks`);
    expect(a).toContain(`--ro-bind ${b.cwd}/.git/config ${b.cwd}/.git/config`);
    expect(a).toContain(`--tmpfs ${b.cwd}/.pion --remount-ro ${b.cwd}/.pion`); // sealed while missing
    expect(a).toContain(`--tmpfs ${b.pionHome}`);
    expect(a).toContain(`--tmpfs ${b.userHome}/.ssh`);
    expect(a).toContain("--unshare-net");
    expect(a).toContain("--cap-drop ALL --seccomp 3");
    // the bind of the cwd comes before what is kept read-only inside it
    expect(a.indexOf(`--bind ${b.cwd}`)).toBeLessThan(a.indexOf(`${b.cwd}/.git/hooks`));
    const open = sandboxPolicy({ ...b, user: { mode: "workspace-write", network: true } })!;
    expect(bwrapArgs(open, "/x/tmp", 3)).not.toContain("--unshare-net");
    expect(protectedPaths(p).kept).toContain(join(b.cwd, ".gitmodules"));
  });
});

describe("probe helpers", () => {
  test("bwrap on PATH, never from inside the working folder or a relative entry", () => {
    const cwd = dir();
    mkdirSync(join(cwd, "bin"));
    writeFileSync(join(cwd, "bin", "bwrap"), "#!/bin/sh\n", { mode: 0o755 });
    expect(findBwrap(undefined, cwd, `${cwd}/bin:bin`)).toBeUndefined();
    const other = dir();
    writeFileSync(join(other, "bwrap"), "#!/bin/sh\n", { mode: 0o755 });
    expect(findBwrap(undefined, cwd, `${cwd}/bin:${other}`)).toBe(join(other, "bwrap"));
    expect(findBwrap("/nonexistent/bwrap", cwd)).toBeUndefined();
  });

  test("bwrap 0.8 or later", () => {
    expect(versionOk("bubblewrap 0.8.0").ok).toBe(true);
    expect(versionOk("bubblewrap 0.11.0").ok).toBe(true);
    expect(versionOk("bubblewrap 0.7.2").ok).toBe(false);
    expect(versionOk("nonsense").ok).toBe(false);
  });
});
