/**
 * What an executable's header says it is: the format (ELF, Mach-O, PE), the CPU, and for ELF
 * the C library its interpreter belongs to. release.ts refuses to ship a file whose header
 * disagrees with its target's name, so a wrong target cannot go out under a right name.
 */
export interface BinaryFormat {
  format: "elf" | "macho" | "pe";
  arch: "x64" | "arm64" | "other";
  /** ELF only: the dynamic loader named in PT_INTERP ("glibc", "musl"), "static" when there is none. */
  libc?: "glibc" | "musl" | "static" | "other";
}

/** The release targets and what each file's header must say. */
export const TARGETS: Record<string, BinaryFormat & { exe: boolean }> = {
  "linux-x64": { format: "elf", arch: "x64", libc: "glibc", exe: false },
  "linux-x64-musl": { format: "elf", arch: "x64", libc: "musl", exe: false },
  "linux-arm64": { format: "elf", arch: "arm64", libc: "glibc", exe: false },
  "darwin-arm64": { format: "macho", arch: "arm64", exe: false },
  "darwin-x64": { format: "macho", arch: "x64", exe: false },
  "windows-x64": { format: "pe", arch: "x64", exe: true },
};

/** Reads the header of `bytes`; throws when it is none of the three formats. */
export function readBinaryFormat(bytes: Uint8Array): BinaryFormat {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length >= 64 && view.getUint32(0) === 0x7f454c46) {
    // 64-bit little-endian only: every target pion ships is.
    if (bytes[4] !== 2 || bytes[5] !== 1) throw new Error("ELF file is not 64-bit little-endian");
    const machine = view.getUint16(18, true);
    const arch = machine === 62 ? "x64" : machine === 183 ? "arm64" : "other";
    return { format: "elf", arch, libc: elfLibc(bytes, view) };
  }
  if (bytes.length >= 8 && view.getUint32(0, true) === 0xfeedfacf) {
    const cpu = view.getUint32(4, true);
    return { format: "macho", arch: cpu === 0x01000007 ? "x64" : cpu === 0x0100000c ? "arm64" : "other" };
  }
  if (bytes.length >= 64 && bytes[0] === 0x4d && bytes[1] === 0x5a) {
    const pe = view.getUint32(0x3c, true);
    if (pe + 6 > bytes.length || view.getUint32(pe) !== 0x50450000) throw new Error("MZ file without a PE header");
    const machine = view.getUint16(pe + 4, true);
    return { format: "pe", arch: machine === 0x8664 ? "x64" : machine === 0xaa64 ? "arm64" : "other" };
  }
  throw new Error("not an ELF, Mach-O or PE executable");
}

function elfLibc(bytes: Uint8Array, view: DataView): BinaryFormat["libc"] {
  const phoff = Number(view.getBigUint64(32, true));
  const phentsize = view.getUint16(54, true);
  const phnum = view.getUint16(56, true);
  for (let i = 0; i < phnum; i++) {
    const ph = phoff + i * phentsize;
    if (ph + 40 > bytes.length || view.getUint32(ph, true) !== 3) continue; // PT_INTERP
    const off = Number(view.getBigUint64(ph + 8, true));
    const size = Number(view.getBigUint64(ph + 32, true));
    const interp = new TextDecoder().decode(bytes.subarray(off, off + size));
    return interp.includes("ld-musl") ? "musl" : interp.includes("ld-linux") ? "glibc" : "other";
  }
  return "static";
}

/** Throws, naming both, when the header of `bytes` is not what `target` must be. */
export function checkBinaryFormat(bytes: Uint8Array, target: string): void {
  const want = TARGETS[target];
  if (!want) throw new Error(`unknown release target ${target}`);
  const got = readBinaryFormat(bytes);
  const say = (f: BinaryFormat) => [f.format, f.arch, f.libc].filter(Boolean).join("/");
  if (got.format !== want.format || got.arch !== want.arch || (want.libc !== undefined && got.libc !== want.libc)) {
    throw new Error(`${target}: the file is ${say(got)}, expected ${say(want)}`);
  }
}
