import type { FileSink } from "bun";
import type { JsonPiece } from "../util/json-pieces.ts";
import { log } from "../util/log.ts";

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
  /**
   * One line given as pieces, strings or UTF-8 bytes (their concatenation must be one JSON object ending in LF), taken
   * from `parts` only as fast as stdout takes them, so a large answer is never built whole.
   * Records written meanwhile wait and follow the line. A piece that throws ends the line
   * where it is (a client sees one malformed line) and the error rejects the returned promise.
   */
  writeStream(parts: Iterable<JsonPiece>): Promise<void> | undefined;
  /** Resolves once everything written so far has been handed to the OS. */
  drain(): Promise<void>;
}

const HIGH_WATER = 1 << 20;
const GC_EVERY = 8 << 20;
/**
 * A streamed answer that starts after this much was streamed since the last collection starts
 * with a young-generation one (0.1-0.6 ms): the answers before it left their pages of rows as
 * garbage. A session browser's get_messages, get_entries and get_tree of a 1k-entry session one
 * after another (bench/sessions.ts, reopen, medians of 10): get_tree 7.1 -> 4.7 ms, get_entries
 * 4.9 -> 5.6 ms, get_messages unchanged; a collection before get_tree only (1 MB) left it at 7.4.
 */
const GC_BEFORE = 512 << 10;
/**
 * A full collection after an answer this large; smaller ones get a young-generation one. A full
 * collection costs 10-15 ms even after a 10 MB answer (and the heap it shrinks is regrown by the
 * next answer): at 10k entries the forced full collection made get_entries/get_tree 30-40%
 * slower; with young-generation ones the process sat at 160 MB instead of 115 after ten such
 * answers (the reference: 190 MB). After 100 MB answers the full collection keeps the peak down.
 */
const FULL_GC_OVER = 48 << 20;
/**
 * A streamed answer is handed to the OS every FLUSH_AT bytes while the pipe takes them: Bun's
 * sink keeps what it was given until a flush, so an answer written whole before its first flush
 * was copied into a buffer grown to its size (1k entries' get_messages, 0.9 MB: 530 page faults
 * and 1.7 ms of its 6 ms, against 0.4 ms flushed every 64 KB). Once a flush finds the pipe full,
 * the stream stops flushing and goes on until STREAM_CHUNK is buffered, then waits for the
 * reader: a 10 MB answer is three waits, not ten (each wait is a wake-up of the event loop,
 * which costs the most on a busy machine), and never more than two chunks are buffered.
 */
const FLUSH_AT = 64 << 10;
const STREAM_CHUNK = 4 << 20;

type HeldItem = string | Uint8Array | { pieces: Iterable<JsonPiece>; ok: () => void; no: (err: unknown) => void };
interface Held {
  items: HeldItem[];
  /** Resolves once the streamed line and everything held behind it were handed over. */
  done: Promise<void>;
}

/** What the writer needs of Bun's FileSink. */
export type Sink = Pick<FileSink, "write" | "flush">;

/**
 * `sink` for a reader that may go away (`| head -1`): the first write the OS refuses (EPIPE and
 * the like) calls `onGone` once, and every write after it is dropped, so a closed pipe never
 * surfaces as an error or a stack trace. The writer itself stays unaware of it.
 */
export function closableSink(sink: Sink, onGone: (err: unknown) => void): Sink {
  let gone = false;
  const fail = (err: unknown) => {
    if (gone) return;
    gone = true;
    onGone(err);
  };
  // Bun's sink reports a refused write by throwing or through the promise it returns.
  const guard = <T extends number | Promise<number>>(call: () => T): number | Promise<number> => {
    if (gone) return 0;
    try {
      const r = call();
      return r instanceof Promise ? r.catch((err: unknown) => (fail(err), 0)) : r;
    } catch (err) {
      fail(err);
      return 0;
    }
  };
  return {
    write: (chunk) => guard(() => sink.write(chunk)),
    flush: () => guard(() => sink.flush()),
  };
}

export function createWriter(sink: Sink): Writer {
  /** Bytes streamed since the writer last collected garbage (GC_EVERY, GC_BEFORE). */
  let sinceGc = 0;
  const collect = (full: boolean) => {
    Bun.gc(full);
    sinceGc = 0;
  };
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

  /** Set while a streamed line is being written: what others write waits here, in order. */
  let held: Held | undefined;

  const writeLine = (line: string): Promise<void> | undefined => {
    if (held) {
      held.items.push(line);
      return held.done;
    }
    return append(line);
  };

  const append = (line: string): Promise<void> | undefined => {
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
    if (held) {
      held.items.push(Uint8Array.from(line));
      return held.done;
    }
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
  const writeStream = (pieces: Iterable<JsonPiece>): Promise<void> | undefined => {
    if (held) {
      let settle!: { ok: () => void; no: (err: unknown) => void };
      const done = new Promise<void>((ok, no) => (settle = { ok, no }));
      held.items.push({ pieces, ...settle });
      return done;
    }
    if (sinceGc >= GC_BEFORE) collect(false);
    const it = pieces[Symbol.iterator]();
    let release!: () => void;
    const mine: Held = { items: [], done: new Promise<void>((ok) => (release = ok)) };
    held = mine;
    const finish = (err?: unknown): Promise<void> | undefined => {
      held = undefined;
      if (err !== undefined) {
        append("\n");
        log("rpc", "a streamed response failed midway", { error: err instanceof Error ? err.message : String(err) });
      }
      // A large answer's garbage is collected once it is out (see GC_EVERY, FULL_GC_OVER).
      if (total >= GC_EVERY) collect(total >= FULL_GC_OVER);
      const wait = writeHeld(mine.items);
      release();
      if (err !== undefined) return Promise.reject(err);
      return wait;
    };
    let total = 0;
    /** Taken since the last flush: strings in `parts`, bytes already handed to the sink. */
    let pending = 0;
    /** Bytes, FLUSH_AT at a time, each flushed at once while the pipe takes them. */
    const putBytes = (bytes: Uint8Array) => {
      writeParts(); // keep the order of the pieces
      let at = 0;
      while (blocked === undefined && bytes.length - at >= FLUSH_AT - pending) {
        const end = at + FLUSH_AT - pending;
        sink.write(bytes.subarray(at, end));
        at = end;
        pending = 0;
        flush();
      }
      if (at < bytes.length) {
        sink.write(at === 0 ? bytes : bytes.subarray(at));
        pending += bytes.length - at;
      }
    };
    const pump = (): Promise<void> | undefined => {
      try {
        for (let r = it.next(); !r.done; r = it.next()) {
          const piece = r.value;
          // The pieces (rows read, JSON sliced from them) are garbage as soon as they are
          // written; collect the young generation every few megabytes, or a 100 MB answer
          // leaves its own size of it behind.
          sinceGc += piece.length;
          total += piece.length;
          if (sinceGc >= GC_EVERY) collect(false);
          if (typeof piece === "string") {
            parts.push(piece);
            size += piece.length;
            pending += piece.length;
            if (blocked === undefined && pending >= FLUSH_AT) {
              pending = 0;
              flush();
            }
          } else putBytes(piece);
          if (pending < STREAM_CHUNK) continue;
          pending = 0;
          // Wait for the flush before this one (see STREAM_CHUNK).
          const previous = blocked;
          flush();
          if (previous) return previous.then(pump, finish);
        }
      } catch (err) {
        return finish(err);
      }
      if (!scheduled && (parts.length > 0 || pending > 0)) {
        scheduled = true;
        setImmediate(flush);
      }
      return finish();
    };
    return pump();
  };

  /** What waited behind a streamed line, in order; a stream among it holds the rest again. */
  const writeHeld = (items: HeldItem[]): Promise<void> | undefined => {
    let wait: Promise<void> | undefined;
    for (let i = 0; i < items.length; i++) {
      const item = items[i]!;
      if (held) {
        held.items.push(...items.slice(i));
        return held.done;
      }
      if (typeof item === "string") wait = writeLine(item);
      else if (item instanceof Uint8Array) wait = writeBytes(item);
      else {
        const p = writeStream(item.pieces);
        if (p) p.then(item.ok, item.no);
        else item.ok();
        wait = p;
      }
    }
    return wait;
  };

  return {
    write: (record) => writeLine(`${JSON.stringify(record)}\n`),
    writeLine,
    writeBytes,
    writeStream,
    drain: async () => {
      await (flush() ?? blocked);
    },
  };
}
