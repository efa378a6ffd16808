import { afterAll, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { hostTarget } from "../../build.ts";
import { releaseName } from "../../release.ts";
import { readBinaryFormat, TARGETS } from "../../scripts/binary-format.ts";
import { describeWith } from "../support/requires.ts";

// scripts/install.sh against a local server holding dist/release/ as a release would:
// /ok/ serves it as built, /bad/ with one checksum changed.
const ROOT = resolve(import.meta.dir, "../..");
const RELEASE = join(ROOT, "dist/release");
const INSTALL = join(ROOT, "scripts/install.sh");
const absent = Object.keys(TARGETS).find((t) => !existsSync(join(RELEASE, releaseName(t))));

const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch(req) {
    const [, kind, name] = new URL(req.url).pathname.split("/");
    if (!name || name.includes("..") || !existsSync(join(RELEASE, name))) return new Response("not found", { status: 404 });
    if (kind === "bad" && name === "SHA256SUMS") {
      const sums = readFileSync(join(RELEASE, name), "utf8");
      return new Response(sums.replace(/^[0-9a-f]/gm, (c) => (c === "0" ? "1" : "0")));
    }
    return new Response(Bun.file(join(RELEASE, name)));
  },
});
// Each install is a 100 MB binary: the folders go when the file is done.
const made: string[] = [];
const tempDir = (prefix: string): string => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
};
afterAll(() => {
  server.stop(true);
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A PATH whose `uname` (and `ldd`, when given) answer as another machine's would. */
function fakeMachine(s: string, m: string, ldd?: string): string {
  const bin = tempDir("pion-fake-bin-");
  writeFileSync(join(bin, "uname"), `#!/bin/sh\ncase "$1" in -s) echo ${s} ;; -m) echo ${m} ;; esac\n`);
  chmodSync(join(bin, "uname"), 0o755);
  if (ldd) {
    writeFileSync(join(bin, "ldd"), `#!/bin/sh\necho '${ldd}' >&2\nexit 1\n`);
    chmodSync(join(bin, "ldd"), 0o755);
  }
  return `${bin}:${process.env.PATH}`;
}

async function install(kind: "ok" | "bad", env: Record<string, string> = {}) {
  const dest = join(tempDir("pion-install-"), "bin");
  const proc = Bun.spawn(["sh", INSTALL, dest], {
    env: { ...process.env, PION_RELEASE_URL: `${server.url.href}${kind}`, ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stderr, code] = await Promise.all([proc.stderr.text(), proc.exited]);
  return { dest, stderr, code };
}

describeWith("install.sh", absent && `dist/release/${releaseName(absent)} (bun run build --release)`, () => {
  test.concurrent("installs this machine's binary, checked, and it runs", async () => {
    const r = await install("ok");
    expect(r.stderr).toContain(`installed ${r.dest}/pion (${hostTarget()})`);
    expect(r.code).toBe(0);
    const v = Bun.spawnSync([join(r.dest, "pion"), "--version"]);
    expect(v.stdout.toString()).toEndWith(` ${hostTarget()}\n`);
  });

  test.concurrent("picks the file uname and ldd name: macOS arm64, Alpine's musl, Windows", async () => {
    const mac = await install("ok", { PATH: fakeMachine("Darwin", "arm64") });
    expect(mac.code).toBe(0);
    expect(readBinaryFormat(readFileSync(join(mac.dest, "pion")).subarray(0, 4096))).toEqual({ format: "macho", arch: "arm64" });
    const alpine = await install("ok", { PATH: fakeMachine("Linux", "x86_64", "musl libc (x86_64)\nVersion 1.2.5") });
    expect(alpine.code).toBe(0);
    expect(readBinaryFormat(readFileSync(join(alpine.dest, "pion")).subarray(0, 1 << 16)).libc).toBe("musl");
    const windows = await install("ok", { PATH: fakeMachine("MINGW64_NT-10.0", "x86_64") });
    expect(windows.code).toBe(0);
    expect(readdirSync(windows.dest)).toEqual(["pion.exe"]);
  });

  test.concurrent("a checksum mismatch or a machine without a binary installs nothing", async () => {
    const bad = await install("bad");
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("checksum mismatch for pion-");
    expect(readdirSync(bad.dest)).toEqual([]);
    const arm = await install("ok", { PATH: fakeMachine("Linux", "aarch64", "musl libc (aarch64)") });
    expect(arm.code).toBe(1);
    expect(arm.stderr).toContain("has no binary for linux-arm64-musl");
    const none = await install("ok", { PION_RELEASE_URL: "" });
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("set PION_RELEASE_URL");
  });
});
