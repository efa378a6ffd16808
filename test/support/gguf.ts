/**
 * A minimal GGUF (version 3) reader and writer, from the format's public description: a header
 * ("GGUF", version, tensor count, key/value count), typed key/value metadata, tensor infos
 * (name, dims innermost first, type, offset into the data section), then the aligned data.
 * The reader keeps every value with its type so metadata can be copied into a new file unchanged.
 */

export const GgufType = {
  u8: 0, i8: 1, u16: 2, i16: 3, u32: 4, i32: 5, f32: 6, bool: 7, string: 8, array: 9, u64: 10, i64: 11, f64: 12,
} as const;

export type GgufValue =
  | { type: Exclude<(typeof GgufType)[keyof typeof GgufType], 8 | 9>; value: number | bigint | boolean }
  | { type: 8; value: string }
  | { type: 9; itemType: number; value: unknown[] };

export interface GgufTensor {
  name: string;
  /** Innermost dimension first (ggml's ne[0]). */
  dims: number[];
  /** F32 only: enough for a test model. */
  data: Float32Array;
}

const MAGIC = 0x46554747; // "GGUF" read as a little-endian u32
const ALIGNMENT = 32;
const F32 = 0;

/** The metadata of a GGUF file (tensor infos and data are not read). */
export function readGgufMetadata(bytes: Uint8Array): Map<string, GgufValue> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const dec = new TextDecoder();
  let at = 0;
  const u32 = () => ((at += 4), view.getUint32(at - 4, true));
  const u64 = () => ((at += 8), view.getBigUint64(at - 8, true));
  const str = () => {
    const n = Number(u64());
    at += n;
    return dec.decode(bytes.subarray(at - n, at));
  };
  const scalar = (type: number): unknown => {
    switch (type) {
      case GgufType.u8: return view.getUint8(at++);
      case GgufType.i8: return view.getInt8(at++);
      case GgufType.u16: return ((at += 2), view.getUint16(at - 2, true));
      case GgufType.i16: return ((at += 2), view.getInt16(at - 2, true));
      case GgufType.u32: return u32();
      case GgufType.i32: return ((at += 4), view.getInt32(at - 4, true));
      case GgufType.f32: return ((at += 4), view.getFloat32(at - 4, true));
      case GgufType.bool: return view.getUint8(at++) !== 0;
      case GgufType.string: return str();
      case GgufType.u64: return u64();
      case GgufType.i64: return ((at += 8), view.getBigInt64(at - 8, true));
      case GgufType.f64: return ((at += 8), view.getFloat64(at - 8, true));
      default: throw new Error(`GGUF: unknown value type ${type} at byte ${at}`);
    }
  };
  if (u32() !== MAGIC) throw new Error("not a GGUF file");
  const version = u32();
  if (version !== 3) throw new Error(`GGUF version ${version} is not supported`);
  u64(); // tensor count
  const kvCount = Number(u64());
  const out = new Map<string, GgufValue>();
  for (let i = 0; i < kvCount; i++) {
    const key = str();
    const type = u32();
    if (type === GgufType.array) {
      const itemType = u32();
      const n = Number(u64());
      const items = new Array<unknown>(n);
      for (let j = 0; j < n; j++) items[j] = scalar(itemType);
      out.set(key, { type: 9, itemType, value: items });
    } else {
      out.set(key, { type, value: scalar(type) } as GgufValue);
    }
  }
  return out;
}

/** Growable little-endian byte buffer. */
class Bytes {
  private buf = new Uint8Array(1 << 16);
  private view = new DataView(this.buf.buffer);
  length = 0;
  private room(n: number): void {
    if (this.length + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.length + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }
  put(n: number, write: (v: DataView, at: number) => void): void {
    this.room(n);
    write(this.view, this.length);
    this.length += n;
  }
  raw(b: Uint8Array): void {
    this.room(b.length);
    this.buf.set(b, this.length);
    this.length += b.length;
  }
  pad(): void {
    const n = (ALIGNMENT - (this.length % ALIGNMENT)) % ALIGNMENT;
    this.raw(new Uint8Array(n));
  }
  bytes(): Uint8Array {
    return this.buf.subarray(0, this.length);
  }
}

const enc = new TextEncoder();

function putString(b: Bytes, s: string): void {
  const data = enc.encode(s);
  b.put(8, (v, at) => v.setBigUint64(at, BigInt(data.length), true));
  b.raw(data);
}

function putScalar(b: Bytes, type: number, value: unknown): void {
  switch (type) {
    case GgufType.u8: return b.put(1, (v, at) => v.setUint8(at, value as number));
    case GgufType.i8: return b.put(1, (v, at) => v.setInt8(at, value as number));
    case GgufType.u16: return b.put(2, (v, at) => v.setUint16(at, value as number, true));
    case GgufType.i16: return b.put(2, (v, at) => v.setInt16(at, value as number, true));
    case GgufType.u32: return b.put(4, (v, at) => v.setUint32(at, value as number, true));
    case GgufType.i32: return b.put(4, (v, at) => v.setInt32(at, value as number, true));
    case GgufType.f32: return b.put(4, (v, at) => v.setFloat32(at, value as number, true));
    case GgufType.bool: return b.put(1, (v, at) => v.setUint8(at, value ? 1 : 0));
    case GgufType.string: return putString(b, value as string);
    case GgufType.u64: return b.put(8, (v, at) => v.setBigUint64(at, BigInt(value as bigint), true));
    case GgufType.i64: return b.put(8, (v, at) => v.setBigInt64(at, BigInt(value as bigint), true));
    case GgufType.f64: return b.put(8, (v, at) => v.setFloat64(at, value as number, true));
    default: throw new Error(`GGUF: cannot write value type ${type}`);
  }
}

/** A GGUF v3 file of `metadata` and F32 `tensors`, each tensor's data aligned to 32 bytes. */
export function writeGguf(metadata: ReadonlyMap<string, GgufValue>, tensors: readonly GgufTensor[]): Uint8Array {
  const head = new Bytes();
  head.put(4, (v, at) => v.setUint32(at, MAGIC, true));
  head.put(4, (v, at) => v.setUint32(at, 3, true));
  head.put(8, (v, at) => v.setBigUint64(at, BigInt(tensors.length), true));
  head.put(8, (v, at) => v.setBigUint64(at, BigInt(metadata.size), true));
  for (const [key, val] of metadata) {
    putString(head, key);
    head.put(4, (v, at) => v.setUint32(at, val.type, true));
    if (val.type === GgufType.array) {
      head.put(4, (v, at) => v.setUint32(at, val.itemType, true));
      head.put(8, (v, at) => v.setBigUint64(at, BigInt(val.value.length), true));
      for (const item of val.value) putScalar(head, val.itemType, item);
    } else {
      putScalar(head, val.type, val.value);
    }
  }
  let offset = 0;
  for (const t of tensors) {
    const count = t.dims.reduce((a, d) => a * d, 1);
    if (count !== t.data.length) throw new Error(`GGUF: tensor ${t.name} has ${t.data.length} values for dims ${t.dims.join("x")}`);
    putString(head, t.name);
    head.put(4, (v, at) => v.setUint32(at, t.dims.length, true));
    for (const d of t.dims) head.put(8, (v, at) => v.setBigUint64(at, BigInt(d), true));
    head.put(4, (v, at) => v.setUint32(at, F32, true));
    head.put(8, (v, at) => v.setBigUint64(at, BigInt(offset), true));
    offset += Math.ceil((count * 4) / ALIGNMENT) * ALIGNMENT;
  }
  head.pad();
  const out = new Uint8Array(head.length + offset);
  out.set(head.bytes());
  let at = head.length;
  for (const t of tensors) {
    out.set(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength), at);
    at += Math.ceil((t.data.length * 4) / ALIGNMENT) * ALIGNMENT;
  }
  return out;
}
