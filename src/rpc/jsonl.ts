/**
 * Strict JSONL over a byte stream: records end at LF only; one trailing CR is dropped;
 * U+2028/U+2029 stay inside records; a UTF-8 character split across chunks is
 * reassembled because splitting happens on bytes before decoding; a last record
 * without LF is still yielded. Lines that are not valid UTF-8 or exceed `maxLineBytes`
 * are yielded as errors so the caller can answer them.
 */
export type JsonlRecord = { line: string } | { error: string };

const LF = 0x0a;
const CR = 0x0d;

export async function* jsonLines(input: AsyncIterable<Uint8Array>, maxLineBytes?: number): AsyncGenerator<JsonlRecord> {
  for await (const batch of jsonLineBatches(input, maxLineBytes)) yield* batch;
}

/** The same records, one array per input chunk (one await per chunk, not per line). */
export async function* jsonLineBatches(
  input: AsyncIterable<Uint8Array>,
  maxLineBytes = 256 * 1024 * 1024,
): AsyncGenerator<JsonlRecord[]> {
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let parts: Uint8Array[] = [];
  let size = 0;
  let overflow = false;

  const finish = (tail: Uint8Array): JsonlRecord => {
    if (overflow) {
      overflow = false;
      return { error: `line exceeds ${maxLineBytes} bytes` };
    }
    const bytes = parts.length === 0 ? tail : concat(parts, tail, size + tail.length);
    parts = [];
    size = 0;
    const end = bytes.length > 0 && bytes[bytes.length - 1] === CR ? bytes.length - 1 : bytes.length;
    try {
      return { line: decoder.decode(bytes.subarray(0, end)) };
    } catch {
      return { error: "invalid UTF-8 in input line" };
    }
  };

  for await (const chunk of input) {
    let start = 0;
    const batch: JsonlRecord[] = [];
    for (let nl = chunk.indexOf(LF); nl !== -1; nl = chunk.indexOf(LF, start)) {
      batch.push(finish(chunk.subarray(start, nl)));
      start = nl + 1;
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      if (overflow || size + rest.length > maxLineBytes) {
        overflow = true;
        parts = [];
        size = 0;
      } else {
        // copy: the runtime may reuse the chunk's buffer
        parts.push(rest.slice());
        size += rest.length;
      }
    }
    if (batch.length > 0) yield batch;
  }
  if (size > 0 || overflow) yield [finish(new Uint8Array(0))];
}

function concat(parts: Uint8Array[], tail: Uint8Array, total: number): Uint8Array {
  const out = new Uint8Array(total);
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  out.set(tail, off);
  return out;
}
