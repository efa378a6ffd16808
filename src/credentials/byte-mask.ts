/**
 * Credential masking over raw bytes (a shell command's output streamed to the host without
 * becoming JS strings). Matches are found with Buffer#indexOf (native); a chunk with nothing
 * to mask and no secret's beginning at its end is passed on as is, without a copy.
 */

export interface ByteSecret {
  bytes: Uint8Array;
  replacement: Uint8Array;
}

const EMPTY = new Uint8Array(0);
const view = (u: Uint8Array): Buffer => Buffer.from(u.buffer, u.byteOffset, u.byteLength);

/**
 * Masks a stream cut into arbitrary chunks: a secret split between two chunks is still
 * masked, because the end of a chunk that could begin a secret is held back until the next
 * one (or `final`) decides. Secrets are tried longest first at each position.
 */
export class ByteStreamMasker {
  private carry: Uint8Array = EMPTY;
  private readonly secrets: readonly ByteSecret[];
  /** Secrets replaced so far. */
  masked = 0;
  /** Bytes the last `push` held back (the end of its input that could begin a secret). */
  get held(): number {
    return this.carry.length;
  }

  constructor(secrets: readonly ByteSecret[]) {
    this.secrets = [...secrets].filter((s) => s.bytes.length > 0).sort((a, b) => b.bytes.length - a.bytes.length);
  }

  /** The masked bytes to pass on for `chunk`; may be `chunk` itself (a view: copy it to keep it). */
  push(chunk: Uint8Array, final: boolean): Uint8Array {
    let buf = chunk;
    if (this.carry.length > 0) {
      buf = new Uint8Array(this.carry.length + chunk.length);
      buf.set(this.carry);
      buf.set(chunk, this.carry.length);
      this.carry = EMPTY;
    }
    const b = view(buf);
    const parts: Uint8Array[] = [];
    let pos = 0;
    let holdFrom = -1;
    // Next occurrence of each secret at or after `pos` (-1: none left in this buffer).
    const next = this.secrets.map((s) => b.indexOf(s.bytes));
    for (;;) {
      let best = -1;
      for (let i = 0; i < next.length; i++) {
        if (next[i]! !== -1 && next[i]! < pos) next[i] = b.indexOf(this.secrets[i]!.bytes, pos);
        const at = next[i]!;
        if (at !== -1 && (best === -1 || at < next[best]!)) best = i;
      }
      if (best === -1) break;
      const at = next[best]!;
      // A longer secret may begin here and go on in the next chunk: wait for it.
      if (!final && this.longerMayFollow(buf, at, this.secrets[best]!.bytes.length)) {
        holdFrom = at;
        break;
      }
      parts.push(buf.subarray(pos, at), this.secrets[best]!.replacement);
      this.masked++;
      pos = at + this.secrets[best]!.bytes.length;
    }
    const hold = final ? 0 : holdFrom >= 0 ? buf.length - holdFrom : this.heldSuffix(buf, pos);
    if (hold > 0) this.carry = buf.slice(buf.length - hold);
    const rest = buf.subarray(pos, buf.length - hold);
    if (parts.length === 0) return rest;
    parts.push(rest);
    return Buffer.concat(parts);
  }

  /** Whether `buf[at..]` is a proper beginning of a secret longer than `len`. */
  private longerMayFollow(buf: Uint8Array, at: number, len: number): boolean {
    return this.secrets.some((s) => s.bytes.length > len && at + s.bytes.length > buf.length && startsWith(s.bytes, buf, at));
  }

  /** Length of the longest end of `buf[from..]` that is a proper beginning of a secret. */
  private heldSuffix(buf: Uint8Array, from: number): number {
    let hold = 0;
    for (const { bytes } of this.secrets) {
      const first = bytes[0]!;
      // Only starts leaving a shorter remainder than the secret, and longer than what is held already.
      for (let p = buf.indexOf(first, Math.max(from, buf.length - bytes.length + 1)); p !== -1 && buf.length - p > hold; p = buf.indexOf(first, p + 1)) {
        if (startsWith(bytes, buf, p)) {
          hold = buf.length - p;
          break;
        }
      }
    }
    return hold;
  }
}

/** Whether `buf[p..]` is a beginning of `secret`. */
function startsWith(secret: Uint8Array, buf: Uint8Array, p: number): boolean {
  for (let i = p; i < buf.length; i++) if (buf[i] !== secret[i - p]) return false;
  return true;
}
