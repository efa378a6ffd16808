import type { FileSink } from "bun";

/**
 * The one stdout writer: each record is serialized to one line, in call order. Lines
 * written before the event loop turns go out in one write (a burst of responses, or the
 * deltas of one network chunk, is one syscall, not one per record: the flush waits for
 * setImmediate, not a microtask, because the token stream hands over each delta in a
 * microtask of its own). Past HIGH_WATER buffered bytes, or when the OS pipe is
 * full, `write` returns a promise that resolves once the bytes were taken; producers
 * that can wait (the token stream, shell output) await it, so a slow reader slows them
 * instead of growing memory.
 */
export interface Writer {
  write(record: object): Promise<void> | undefined;
  /** A line already serialized (must be one JSON object ending in LF). */
  writeLine(line: string): Promise<void> | undefined;
  /** The same as bytes; copied before this returns, so the caller may reuse its buffer. */
  writeBytes(line: Uint8Array): Promise<void> | undefined;
  /** Resolves once everything written so far has been handed to the OS. */
  drain(): Promise<void>;
}

const HIGH_WATER = 1 << 20;

export function createWriter(sink: FileSink): Writer {
  let parts: string[] = [];
  let size = 0;
  let scheduled = false;
  /** Set while the OS pipe is full; writes wait for it. */
  let blocked: Promise<void> | undefined;

  const writeParts = () => {
    if (parts.length > 0) {
      sink.write(parts.length === 1 ? parts[0]! : parts.join(""));
      parts = [];
      size = 0;
    }
  };
  let unflushed = 0;
  const flush = (): Promise<void> | undefined => {
    scheduled = false;
    writeParts();
    unflushed = 0;
    const r = sink.flush();
    if (r instanceof Promise) {
      const p: Promise<void> = r.then(() => {
        if (blocked === p) blocked = undefined;
      });
      blocked = p;
      return p;
    }
    return undefined;
  };

  const writeLine = (line: string): Promise<void> | undefined => {
    parts.push(line);
    size += line.length;
    if (size >= HIGH_WATER) return flush() ?? blocked;
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
    return blocked;
  };

  const writeBytes = (line: Uint8Array): Promise<void> | undefined => {
    writeParts(); // keep the order of records
    sink.write(line);
    unflushed += line.length;
    if (unflushed >= HIGH_WATER) return flush() ?? blocked;
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
    return blocked;
  };
  return {
    write: (record) => writeLine(`${JSON.stringify(record)}\n`),
    writeLine,
    writeBytes,
    drain: async () => {
      await (flush() ?? blocked);
    },
  };
}
