import { createAsciiEscaper, type AsciiEscaper } from "./json-escape-wasm.ts";

/**
 * JSON string escaping straight from UTF-8 bytes into a reusable byte buffer, so output
 * that is only passed on (a shell command's stdout) never becomes a JS string. Decoding
 * follows the WHATWG UTF-8 decoder, so invalid bytes become U+FFFD exactly where
 * TextDecoder would put them, and a character cut by a chunk's end continues in the next.
 */
export class JsonBytesEscaper {
  private out: Uint8Array = new Uint8Array(1 << 16);
  private len = 0;
  /** ASCII runs go through WebAssembly SIMD when available; the byte loop below does the rest. */
  private readonly simd: AsciiEscaper | undefined;
  // decoder state across chunks
  private needed = 0;
  private seen = 0;
  private lower = 0x80;
  private upper = 0xbf;
  private pending = new Uint8Array(4);

  constructor(options: { simd?: boolean } = {}) {
    this.simd = options.simd === false ? undefined : createAsciiEscaper();
  }

  /** Escape `chunk` (continuing the previous one) between `prefix` and `suffix`; valid until the next call. */
  line(prefix: Uint8Array, chunk: Uint8Array, suffix: Uint8Array, final = false): Uint8Array {
    const w = this.simd;
    if (!w) return this.lineByBytes(prefix, chunk, suffix, final);
    const n = chunk.length;
    const room = prefix.length + n * 6 + suffix.length + 8;
    w.reserve(n, room);
    const mem = w.bytes();
    const dst = w.DST();
    mem.set(chunk, w.SRC);
    // The byte loop writes into the module's output area too, between the vector runs.
    this.out = mem.subarray(dst, dst + room + 16);
    this.out.set(prefix, 0);
    this.len = prefix.length;
    for (let i = 0; i < n; ) {
      // Between characters, an ASCII byte starts a run for the module; other text stays in the loop.
      if (this.needed === 0 && chunk[i]! < 0x80) {
        const [taken, end] = w.escape(w.SRC + i, w.SRC + n, dst + this.len);
        i += taken;
        this.len = end - dst;
        if (i >= n) break;
      }
      i += this.byte(chunk[i]!) ? 1 : 0;
    }
    if (final && this.needed !== 0) {
      this.resetSeq();
      this.fffd();
    }
    this.out.set(suffix, this.len);
    this.len += suffix.length;
    return this.out.subarray(0, this.len);
  }

  private lineByBytes(prefix: Uint8Array, chunk: Uint8Array, suffix: Uint8Array, final: boolean): Uint8Array {
    this.len = 0;
    this.put(prefix);
    this.reserve(chunk.length * 6 + 8);
    for (let i = 0; i < chunk.length; ) i += this.byte(chunk[i]!) ? 1 : 0;
    if (final && this.needed !== 0) {
      this.resetSeq();
      this.fffd();
    }
    this.put(suffix);
    return this.out.subarray(0, this.len);
  }

  /** Consume one byte; false means "process this byte again" (it ended an invalid sequence). */
  private byte(c: number): boolean {
    if (this.needed === 0) {
      if (c < 0x80) {
        this.ascii(c);
        return true;
      }
      if (c >= 0xc2 && c <= 0xdf) this.needed = 1;
      else if (c >= 0xe0 && c <= 0xef) {
        if (c === 0xe0) this.lower = 0xa0;
        if (c === 0xed) this.upper = 0x9f;
        this.needed = 2;
      } else if (c >= 0xf0 && c <= 0xf4) {
        if (c === 0xf0) this.lower = 0x90;
        if (c === 0xf4) this.upper = 0x8f;
        this.needed = 3;
      } else {
        this.fffd();
        return true;
      }
      this.pending[0] = c;
      return true;
    }
    if (c < this.lower || c > this.upper) {
      this.resetSeq();
      this.fffd();
      return false;
    }
    this.lower = 0x80;
    this.upper = 0xbf;
    this.pending[++this.seen] = c;
    if (this.seen === this.needed) {
      for (let k = 0; k <= this.needed; k++) this.out[this.len++] = this.pending[k]!;
      this.resetSeq();
    }
    return true;
  }

  private resetSeq(): void {
    this.needed = 0;
    this.seen = 0;
    this.lower = 0x80;
    this.upper = 0xbf;
  }

  private ascii(c: number): void {
    const out = this.out;
    if (c >= 0x20 && c !== 0x22 && c !== 0x5c) {
      out[this.len++] = c;
      return;
    }
    out[this.len++] = 0x5c;
    if (c === 0x22 || c === 0x5c) out[this.len++] = c;
    else if (c === 0x0a) out[this.len++] = 0x6e;
    else if (c === 0x0d) out[this.len++] = 0x72;
    else if (c === 0x09) out[this.len++] = 0x74;
    else if (c === 0x08) out[this.len++] = 0x62;
    else if (c === 0x0c) out[this.len++] = 0x66;
    else {
      out[this.len++] = 0x75;
      out[this.len++] = 0x30;
      out[this.len++] = 0x30;
      out[this.len++] = HEX[c >> 4]!;
      out[this.len++] = HEX[c & 15]!;
    }
  }

  private fffd(): void {
    this.out[this.len++] = 0xef;
    this.out[this.len++] = 0xbf;
    this.out[this.len++] = 0xbd;
  }

  private put(bytes: Uint8Array): void {
    this.reserve(bytes.length);
    this.out.set(bytes, this.len);
    this.len += bytes.length;
  }

  private reserve(extra: number): void {
    if (this.len + extra <= this.out.length) return;
    const next = new Uint8Array(Math.max(this.out.length * 2, this.len + extra));
    next.set(this.out.subarray(0, this.len));
    this.out = next;
  }
}

const HEX = new TextEncoder().encode("0123456789abcdef");

/** An event already serialized as one JSON line (bytes ending in LF); writers pass it on as is. */
export class EncodedEvent<T extends string = "bash_execution_update"> {
  constructor(
    readonly type: T,
    readonly bytes: Uint8Array,
  ) {}
}
