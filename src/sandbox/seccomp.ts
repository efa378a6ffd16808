import { dlopen, FFIType, type Pointer } from "bun:ffi";
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

/**
 * The seccomp program pion hands to `bwrap --seccomp <fd>` for the model's commands, built
 * with libseccomp (libseccomp2, loaded through bun:ffi at run time; no headers needed).
 *
 * Default ALLOW; refused:
 * - socket(AF_UNIX, …) → EPERM: a read-only bind does not stop connect() to a host socket.
 *   socketpair stays allowed (it reaches nothing outside).
 * - io_uring_setup/enter/register → EPERM: io_uring can issue socket and file operations
 *   that this filter never sees.
 * - unshare(CLONE_NEWUSER) and clone(CLONE_NEWUSER) → EPERM: a new user namespace inside
 *   would regain capabilities over the sandbox's own mounts.
 * - clone3 → ENOSYS: its flags sit in a struct seccomp cannot read; glibc falls back to
 *   clone on ENOSYS, where the flags are checked.
 *
 * Architecture: the native one only. A syscall made with any other ABI (an i386 binary on
 * x86_64, which could reach socket via socketcall; x32) hits libseccomp's bad-arch action,
 * left at its default KILL, so nothing a non-native binary does goes unfiltered.
 */

// Verified against /usr/include/seccomp.h (libseccomp 2.5.4).
const SCMP_ACT_ALLOW = 0x7fff0000;
const SCMP_ACT_ERRNO = (errno: number): number => (0x00050000 | (errno & 0xffff)) >>> 0;
const SCMP_CMP_MASKED_EQ = 7; // (arg & datum_a) == datum_b
const NR_SCMP_ERROR = -1; // seccomp_syscall_resolve_name's failure value; other negatives are pseudo-syscalls
const ARG_CMP_SIZE = 24; // struct scmp_arg_cmp { unsigned arg; enum op; uint64 datum_a; uint64 datum_b; }

// errno values are the generic Linux ones on every architecture pion ships for.
const EPERM = 1;
const ENOSYS = 38;
const AF_UNIX = 1n;
const CLONE_NEWUSER = 0x10000000n;

/** clone's flags argument is arg0 except on s390 (CLONE_BACKWARDS2), where it is arg1. */
const CLONE_FLAGS_ARG = process.arch === "s390x" ? 1 : 0;

/** Tried in order: the soname (the loader's own search), then where distributions put it. */
const LIBSECCOMP_CANDIDATES = [
  "libseccomp.so.2",
  "/usr/lib/x86_64-linux-gnu/libseccomp.so.2",
  "/lib/x86_64-linux-gnu/libseccomp.so.2",
  "/usr/lib/aarch64-linux-gnu/libseccomp.so.2",
  "/lib/aarch64-linux-gnu/libseccomp.so.2",
  "/usr/lib64/libseccomp.so.2",
  "/lib64/libseccomp.so.2",
  "/usr/lib/libseccomp.so.2",
  "/lib/libseccomp.so.2",
];

const symbols = {
  seccomp_init: { args: [FFIType.u32], returns: FFIType.ptr },
  seccomp_release: { args: [FFIType.ptr], returns: FFIType.void },
  seccomp_syscall_resolve_name: { args: [FFIType.ptr], returns: FFIType.i32 },
  seccomp_rule_add_array: {
    args: [FFIType.ptr, FFIType.u32, FFIType.i32, FFIType.u32, FFIType.ptr],
    returns: FFIType.i32,
  },
  seccomp_export_bpf: { args: [FFIType.ptr, FFIType.i32], returns: FFIType.i32 },
} as const;

type Libseccomp = ReturnType<typeof dlopen<typeof symbols>>;

/** One argument comparison: `(args[arg] & mask) == value`. */
interface ArgCmp {
  arg: number;
  mask: bigint;
  value: bigint;
}

interface Rule {
  syscall: string;
  action: number;
  when?: ArgCmp;
}

// Masked comparisons throughout: socket's domain is an int, so the kernel ignores the upper
// 32 bits of the register; a plain 64-bit EQ on AF_UNIX could be dodged by setting them.
const RULES: readonly Rule[] = [
  { syscall: "socket", action: SCMP_ACT_ERRNO(EPERM), when: { arg: 0, mask: 0xffffffffn, value: AF_UNIX } },
  { syscall: "io_uring_setup", action: SCMP_ACT_ERRNO(EPERM) },
  { syscall: "io_uring_enter", action: SCMP_ACT_ERRNO(EPERM) },
  { syscall: "io_uring_register", action: SCMP_ACT_ERRNO(EPERM) },
  { syscall: "unshare", action: SCMP_ACT_ERRNO(EPERM), when: { arg: 0, mask: CLONE_NEWUSER, value: CLONE_NEWUSER } },
  {
    syscall: "clone",
    action: SCMP_ACT_ERRNO(EPERM),
    when: { arg: CLONE_FLAGS_ARG, mask: CLONE_NEWUSER, value: CLONE_NEWUSER },
  },
  { syscall: "clone3", action: SCMP_ACT_ERRNO(ENOSYS) },
];

let cachedFilter: Uint8Array | undefined;
let loadedFrom: string | undefined;

/**
 * The compiled BPF program (struct sock_filter[], native endianness), ready to be written to
 * the fd given to `bwrap --seccomp`. Built once per process; later calls return a copy of
 * the cached bytes. Throws an Error naming the cause when libseccomp cannot be loaded or a
 * libseccomp call fails; the caller reports that as "sandbox unavailable". Failures are not
 * cached, so a later call tries again.
 */
export function seccompFilter(): Uint8Array {
  cachedFilter ??= buildFilter();
  return cachedFilter.slice();
}

/** Where libseccomp was loaded from (for `pion sandbox check`), or undefined before a successful build. */
export function libseccompPath(): string | undefined {
  return loadedFrom;
}

function buildFilter(): Uint8Array {
  const { lib, name } = openLibseccomp();
  try {
    const bytes = compile(lib);
    loadedFrom = resolvedPath(name);
    return bytes;
  } finally {
    lib.close();
  }
}

function openLibseccomp(): { lib: Libseccomp; name: string } {
  const failures: string[] = [];
  for (const name of LIBSECCOMP_CANDIDATES) {
    // Bun's dlopen retries a bare name relative to the cwd when the loader's search fails; the
    // cwd may be an untrusted checkout, so a file planted there must never be what gets loaded.
    if (!name.startsWith("/") && existsSync(resolve(name))) {
      failures.push(`${name}: skipped, a file of that name is in the working directory`);
      continue;
    }
    try {
      return { lib: dlopen(name, symbols), name };
    } catch (err) {
      failures.push(`${name}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  throw new Error(`libseccomp could not be loaded (install libseccomp2); tried ${failures.join("; ")}`);
}

function compile(lib: Libseccomp): Uint8Array {
  const s = lib.symbols;
  const ctx = s.seccomp_init(SCMP_ACT_ALLOW);
  // bun:ffi hands pointers back as numbers; null is libseccomp's failure, a bigint would be unusable here.
  if (typeof ctx !== "number") throw new Error(`libseccomp: seccomp_init failed (returned ${String(ctx)})`);
  try {
    for (const rule of RULES) addRule(lib, ctx, rule);
    return exportBpf(lib, ctx);
  } finally {
    s.seccomp_release(ctx);
  }
}

function addRule(lib: Libseccomp, ctx: Pointer, rule: Rule): void {
  const nr = lib.symbols.seccomp_syscall_resolve_name(Buffer.from(`${rule.syscall}\0`));
  if (nr === NR_SCMP_ERROR) throw new Error(`libseccomp does not know the syscall ${rule.syscall} (too old?)`);
  const cmp = rule.when ? argCmp(rule.when) : null;
  const rc = lib.symbols.seccomp_rule_add_array(ctx, rule.action, nr, cmp ? 1 : 0, cmp);
  if (rc < 0) throw new Error(`libseccomp: seccomp_rule_add(${rule.syscall}) failed: errno ${-rc}`);
}

/** A struct scmp_arg_cmp laid out in native endianness, since bun:ffi cannot pass structs by value. */
function argCmp(c: ArgCmp): Uint8Array {
  const buf = new ArrayBuffer(ARG_CMP_SIZE);
  const u32 = new Uint32Array(buf, 0, 2);
  const u64 = new BigUint64Array(buf, 8, 2);
  u32[0] = c.arg;
  u32[1] = SCMP_CMP_MASKED_EQ;
  u64[0] = c.mask;
  u64[1] = c.value;
  return new Uint8Array(buf);
}

/** seccomp_export_bpf writes to an fd; a private 0600 file in a fresh 0700 dir is the simplest one Bun has. */
function exportBpf(lib: Libseccomp, ctx: Pointer): Uint8Array {
  const dir = mkdtempSync(join(tmpdir(), "pion-seccomp-"));
  try {
    const file = join(dir, "filter.bpf");
    const fd = openSync(file, "wx", 0o600);
    try {
      const rc = lib.symbols.seccomp_export_bpf(ctx, fd);
      if (rc < 0) throw new Error(`libseccomp: seccomp_export_bpf failed: errno ${-rc}`);
    } finally {
      closeSync(fd);
    }
    const bytes = new Uint8Array(readFileSync(file));
    if (bytes.length === 0 || bytes.length % 8 !== 0) {
      throw new Error(`libseccomp: exported filter has ${bytes.length} bytes, not a whole number of BPF instructions`);
    }
    return bytes;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The file the loader actually mapped for a soname, read from /proc/self/maps; the name itself if not found. */
function resolvedPath(name: string): string {
  if (name.startsWith("/")) return name;
  try {
    const line = readFileSync("/proc/self/maps", "utf8")
      .split("\n")
      .find((l) => l.includes("/libseccomp.so"));
    const path = line?.slice(line.indexOf("/"));
    return path ?? name;
  } catch {
    return name;
  }
}
