import { afterAll, beforeAll, expect, test } from "bun:test";
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { libseccompPath, seccompFilter } from "../../../src/sandbox/seccomp.ts";
import { describeWith } from "../../support/requires.ts";

function missingNeeds(): string | undefined {
  if (process.platform !== "linux") return "Linux";
  if (!Bun.which("bwrap")) return "bwrap (apt install bubblewrap)";
  if (!Bun.which("python3")) return "python3";
  if (!Bun.which("unshare")) return "unshare (util-linux)";
  try {
    seccompFilter();
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
  const probe = Bun.spawnSync(["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "true"]);
  if (probe.exitCode !== 0) return `a working bwrap (${probe.stderr.toString().trim()})`;
  return undefined;
}

/** Raw syscall numbers for the probes below; clone3 and io_uring_setup share one table on every arch. */
const CLONE_NR = process.arch === "x64" ? 56 : process.arch === "arm64" ? 220 : undefined;
const SOCKET_NR = process.arch === "x64" ? 41 : process.arch === "arm64" ? 198 : undefined;
const CLONE3_NR = 435;
const IO_URING_SETUP_NR = 425;

/** Prints the errno a python3 snippet ends with ("ok" if it raised nothing). */
const py = (body: string): string[] => [
  "python3",
  "-c",
  `import ctypes, os, socket, sys\nlibc = ctypes.CDLL(None, use_errno=True)\ntry:\n${body
    .split("\n")
    .map((l) => `    ${l}`)
    .join("\n")}\nexcept OSError as e:\n    print(e.errno); sys.exit(0)\nprint("ok")`,
];

/** A raw syscall through libc; raises OSError with its errno when it returns -1. */
const rawSyscall = (nr: number, args: string): string =>
  `r = libc.syscall(${nr}, ${args})\nif r == 0: os._exit(0)\nif r < 0: raise OSError(ctypes.get_errno(), "syscall")`;

describeWith("seccomp filter under bwrap", missingNeeds(), () => {
  let dir: string;
  let filterFile: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "pion-seccomp-test-"));
    filterFile = join(dir, "filter.bpf");
    writeFileSync(filterFile, seccompFilter());
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function run(cmd: string[], withFilter = true): Promise<{ exitCode: number; stdout: string; stderr: string }> {
    const base = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"];
    const fd = withFilter ? openSync(filterFile, "r") : undefined;
    try {
      const proc = Bun.spawn([...base, ...(fd === undefined ? [] : ["--seccomp", "3"]), ...cmd], {
        stdio: ["ignore", "pipe", "pipe", ...(fd === undefined ? [] : [fd])],
      });
      const [stdout, stderr, exitCode] = await Promise.all([
        new Response(proc.stdout).text(),
        new Response(proc.stderr).text(),
        proc.exited,
      ]);
      return { exitCode, stdout: stdout.trim(), stderr: stderr.trim() };
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }

  test("the program is whole BPF instructions, cached, and says where libseccomp came from", () => {
    const first = seccompFilter();
    expect(first.length % 8).toBe(0);
    expect(seccompFilter()).toEqual(first);
    expect(libseccompPath()).toContain("libseccomp.so");
  });

  test("without the filter an AF_UNIX socket can be made (so the denials below mean something)", async () => {
    expect(await run(py("socket.socket(socket.AF_UNIX)"), false)).toMatchObject({ exitCode: 0, stdout: "ok" });
  });

  test("plain commands still run", async () => {
    expect(await run(["echo", "hello"])).toEqual({ exitCode: 0, stdout: "hello", stderr: "" });
    expect((await run(["true"])).exitCode).toBe(0);
  });

  test("socket(AF_UNIX) fails with EPERM", async () => {
    expect(await run(py("socket.socket(socket.AF_UNIX)"))).toMatchObject({ exitCode: 0, stdout: "1" });
  });

  // The kernel reads socket's domain as an int; a 64-bit compare on arg0 alone would let this through.
  test.skipIf(SOCKET_NR === undefined)("socket(AF_UNIX) with the domain's upper 32 bits set fails too", async () => {
    const probe = py(`s = libc.syscall(${SOCKET_NR}, ctypes.c_long((1 << 32) | 1), 1, 0)
if s < 0: raise OSError(ctypes.get_errno(), "socket")`);
    expect(await run(probe, false)).toMatchObject({ exitCode: 0, stdout: "ok" });
    expect(await run(probe)).toMatchObject({ exitCode: 0, stdout: "1" });
  });

  test("socketpair and AF_INET sockets keep working", async () => {
    expect(await run(py("socket.socketpair()\nsocket.socket(socket.AF_INET)"))).toMatchObject({
      exitCode: 0,
      stdout: "ok",
    });
  });

  test("unshare -U fails inside", async () => {
    const r = await run(["unshare", "-U", "true"]);
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toContain("Operation not permitted");
  });

  test.skipIf(CLONE_NR === undefined)("clone with CLONE_NEWUSER fails with EPERM", async () => {
    const SIGCHLD = 17;
    expect(await run(py(rawSyscall(CLONE_NR ?? -1, `0x10000000 | ${SIGCHLD}, 0, 0, 0, 0`)))).toMatchObject({
      exitCode: 0,
      stdout: "1",
    });
  });

  test("clone3 reports ENOSYS and threads still start through glibc's fallback", async () => {
    expect(await run(py(rawSyscall(CLONE3_NR, "0, 0")))).toMatchObject({ exitCode: 0, stdout: "38" });
    const threads = py("import threading\nt = threading.Thread(target=lambda: None)\nt.start()\nt.join()");
    expect(await run(threads)).toMatchObject({ exitCode: 0, stdout: "ok" });
  });

  test("io_uring_setup fails with EPERM", async () => {
    expect(await run(py(rawSyscall(IO_URING_SETUP_NR, "1, 0")))).toMatchObject({ exitCode: 0, stdout: "1" });
  });
});
