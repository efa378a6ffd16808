/**
 * JSON string escaping of ASCII bytes with WebAssembly SIMD: sixteen bytes are checked at a
 * time for anything JSON escapes (control characters, `"`, `\`) or that is not ASCII, so
 * plain text is copied a vector at a time (about 6x the byte loop on shell output). The
 * module is assembled here from its instructions (there is no build step for it); when the
 * runtime cannot compile it, `createAsciiEscaper` returns undefined and callers keep their
 * own loop.
 *
 * Memory layout: [0, 128) the escape of each ASCII byte (0: as is, 0xff: \u00XX, else the
 * letter after the backslash), [128, 144) hex digits, then the input at SRC and the output
 * at `dst`. `esc(src, len, dst)` escapes until the input ends or a byte >= 0x80, returns how
 * many input bytes it took and leaves the output's end in the global `out`. A vector store
 * may write up to 16 bytes past that end.
 */

export interface AsciiEscaper {
  /** The module's memory (a fresh view after `reserve`, which may grow it). */
  bytes(): Uint8Array;
  /** Input at SRC, output from DST; room for `input` bytes in and `output` bytes out (plus slack). */
  reserve(input: number, output: number): void;
  readonly SRC: number;
  readonly DST: () => number;
  /** Escapes input[from, to) into output at `at`; returns [input taken, output end]. */
  escape(from: number, to: number, at: number): [number, number];
}

let compiled: WebAssembly.Module | null | undefined;

/** A new escaper with memory of its own; undefined when WebAssembly SIMD is not available. */
export function createAsciiEscaper(): AsciiEscaper | undefined {
  if (compiled === undefined) {
    try {
      compiled = new WebAssembly.Module(assemble());
    } catch {
      compiled = null;
    }
  }
  if (compiled === null) return undefined;
  const instance = new WebAssembly.Instance(compiled);
  const exports = instance.exports as { mem: WebAssembly.Memory; esc: (src: number, len: number, dst: number) => number; out: WebAssembly.Global };
  const memory = exports.mem;
  const SRC = 1024;
  let inputCap = 0;
  let view = new Uint8Array(memory.buffer);
  const table = new Uint8Array(144);
  for (let c = 0; c < 0x20; c++) table[c] = 0xff;
  for (const [c, letter] of [[0x08, 0x62], [0x09, 0x74], [0x0a, 0x6e], [0x0c, 0x66], [0x0d, 0x72], [0x22, 0x22], [0x5c, 0x5c]] as const) table[c] = letter;
  table.set(new TextEncoder().encode("0123456789abcdef"), 128);
  view.set(table, 0);
  return {
    SRC,
    DST: () => SRC + inputCap + 64,
    bytes: () => view,
    reserve(input, output) {
      if (input > inputCap) inputCap = Math.max(input, inputCap * 2, 1 << 16);
      const needed = SRC + inputCap + 64 + output + 64;
      if (needed > memory.buffer.byteLength) {
        memory.grow(Math.ceil((needed - memory.buffer.byteLength) / 65536));
      }
      if (view.buffer !== memory.buffer) view = new Uint8Array(memory.buffer);
    },
    escape(from, to, at) {
      const taken = exports.esc(from, to - from, at);
      return [taken, exports.out.value as number];
    },
  };
}

// --- the module ---

const uleb = (n: number): number[] => {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n !== 0) b |= 0x80;
    out.push(b);
  } while (n !== 0);
  return out;
};
const sleb = (n: number): number[] => {
  const out: number[] = [];
  for (;;) {
    const b = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (b & 0x40) === 0) || (n === -1 && (b & 0x40) !== 0)) return [...out, b];
    out.push(b | 0x80);
  }
};
const vec = (items: number[][]): number[] => [...uleb(items.length), ...items.flat()];
const section = (id: number, body: number[]): number[] => [id, ...uleb(body.length), ...body];
const name = (s: string): number[] => [...uleb(s.length), ...new TextEncoder().encode(s)];

const I32 = 0x7f;
const V128 = 0x7b;
const VOID = 0x40;
const op = {
  block: 0x02, loop: 0x03, if: 0x04, else: 0x05, end: 0x0b, br: 0x0c, brIf: 0x0d,
  get: 0x20, set: 0x21, tee: 0x22, globalSet: 0x24,
  load8: 0x2d, store8: 0x3a, const: 0x41,
  eqz: 0x45, eq: 0x46, geU: 0x4f, gtU: 0x4b, ctz: 0x68, add: 0x6a, and: 0x71, shrU: 0x76,
} as const;
const simd = (code: number): number[] => [0xfd, ...uleb(code)];
const v128 = { load: 0x00, store: 0x0b, const: 0x0c, eq: 0x23, ltS: 0x25, ltU: 0x26, or: 0x50, bitmask: 0x64 } as const;
const splat = (b: number): number[] => [...simd(v128.const), ...new Array<number>(16).fill(b)];
/** memarg: alignment hint, offset */
const at = (offset = 0): number[] => [0x00, ...uleb(offset)];
const i32 = (n: number): number[] => [op.const, ...sleb(n)];
const get = (l: number): number[] => [op.get, l];
const set = (l: number): number[] => [op.set, l];
const inc = (l: number, by: number[]): number[] => [...get(l), ...by, op.add, ...set(l)];
const store8 = (dst: number[], value: number[], offset: number): number[] => [...dst, ...value, op.store8, ...at(offset)];

// params: src, len, dst; locals: i, o, c, e, m (i32), v (v128)
const [src, len, dst, i, o, c, e, m, v] = [0, 1, 2, 3, 4, 5, 6, 7, 8];

/** The module's bytes, assembled on the first escaper (a process that never escapes output never builds them). */
function assemble(): Uint8Array<ArrayBuffer> {
  const BODY = [
    ...i32(0), ...set(i), ...get(dst), ...set(o),
    op.block, VOID, // $done
    op.loop, VOID, // $main
    op.block, VOID, // $scalar: fewer than 16 bytes left, or a byte to escape
    ...get(i), ...i32(16), op.add, ...get(len), op.gtU, op.brIf, 0,
    ...get(src), ...get(i), op.add, ...simd(v128.load), ...at(), ...set(v),
    // lanes to escape or leave to the caller: < 0x20, '"', '\', >= 0x80 (negative as signed)
    ...get(v), ...splat(0x20), ...simd(v128.ltU),
    ...get(v), ...splat(0x22), ...simd(v128.eq), ...simd(v128.or),
    ...get(v), ...splat(0x5c), ...simd(v128.eq), ...simd(v128.or),
    ...get(v), ...splat(0x00), ...simd(v128.ltS), ...simd(v128.or),
    ...simd(v128.bitmask), op.tee, m,
    ...get(o), ...get(v), ...simd(v128.store), ...at(),
    op.eqz, op.if, VOID, // all sixteen as they are
    ...inc(o, i32(16)), ...inc(i, i32(16)), op.br, 2, // -> $main
    op.end,
    ...get(m), op.ctz, ...set(e), // the plain bytes before the first other one stay
    ...inc(o, get(e)), ...inc(i, get(e)),
    op.end, // $scalar
    ...get(i), ...get(len), op.geU, op.brIf, 1, // input done -> $done
    ...get(src), ...get(i), op.add, op.load8, ...at(), op.tee, c,
    ...i32(0x80), op.geU, op.brIf, 1, // not ASCII: the caller decodes it -> $done
    ...get(c), op.load8, ...at(), op.tee, e,
    op.eqz, op.if, VOID,
    ...store8(get(o), get(c), 0), ...inc(o, i32(1)),
    op.else,
    ...store8(get(o), i32(0x5c), 0),
    ...get(e), ...i32(0xff), op.eq, op.if, VOID, // \u00XX
    ...store8(get(o), i32(0x75), 1), ...store8(get(o), i32(0x30), 2), ...store8(get(o), i32(0x30), 3),
    ...store8(get(o), [...get(c), ...i32(4), op.shrU, op.load8, ...at(128)], 4),
    ...store8(get(o), [...get(c), ...i32(15), op.and, op.load8, ...at(128)], 5),
    ...inc(o, i32(6)),
    op.else, // \n, \", ...
    ...store8(get(o), get(e), 1), ...inc(o, i32(2)),
    op.end,
    op.end,
    ...inc(i, i32(1)),
    op.br, 0, // -> $main
    op.end, // $main
    op.end, // $done
    ...get(o), op.globalSet, 0,
    ...get(i),
    op.end,
  ];

  const CODE = [...vec([[...uleb(5), I32], [...uleb(1), V128]]), ...BODY];

  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, vec([[0x60, ...vec([[I32], [I32], [I32]]), ...vec([[I32]])]])), // (i32 i32 i32) -> i32
    ...section(3, vec([[0]])),
    ...section(5, vec([[0x00, ...uleb(32)]])), // 2 MiB to start
    ...section(6, vec([[I32, 0x01, ...i32(0), op.end]])), // mutable global `out`
    ...section(7, vec([[...name("mem"), 0x02, 0], [...name("esc"), 0x00, 0], [...name("out"), 0x03, 0]])),
    ...section(10, vec([[...uleb(CODE.length), ...CODE]])),
  ]);
}
