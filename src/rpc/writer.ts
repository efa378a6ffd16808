import type { FileSink } from "bun";

/**
 * The one stdout writer: each record is serialized to one line and written in call order.
 * Bun's FileSink buffers; past HIGH_WATER buffered bytes `write` returns a promise that
 * resolves once the OS took the bytes. Producers that can wait (the token stream) await
 * it, so a slow reader slows the producer instead of growing memory.
 */
export interface Writer {
  write(record: object): Promise<void> | undefined;
  /** A line already serialized (must be one JSON object ending in LF). */
  writeLine(line: string): Promise<void> | undefined;
  /** Resolves once everything written so far has been handed to the OS. */
  drain(): Promise<void>;
}

const HIGH_WATER = 1 << 20;

export function createWriter(sink: FileSink): Writer {
  let pending = 0;
  const flush = async (): Promise<void> => {
    pending = 0;
    await sink.flush();
  };
  const writeLine = (line: string) => {
    const n = sink.write(line);
    if (typeof n === "number") pending += n;
    return pending >= HIGH_WATER ? flush() : undefined;
  };
  return {
    write: (record) => writeLine(`${JSON.stringify(record)}\n`),
    writeLine,
    drain: flush,
  };
}
