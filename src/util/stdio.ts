/**
 * Text pion itself writes to stdout or stderr outside the protocol writer (subcommand output,
 * help, one-line errors). Bun drops what a pipe has not taken yet when the process exits, so
 * `stdioWritten()` must be awaited before `process.exit`: it ends every stream written here and
 * resolves once each has handed its bytes to the OS, or its reader went away. A reader that
 * closes early (`| head -1`) is not an error: later writes are dropped, no EPIPE surfaces.
 * A stream is only touched once something was written through it here (building
 * `process.stdout` costs start-up time that RPC and JSON mode, which write through Bun.stdout, never pay).
 */
type Stream = NodeJS.WriteStream;

const used = new Map<Stream, { closed: boolean }>();

function streamFor(get: () => Stream): { stream: Stream; state: { closed: boolean } } {
  const stream = get();
  let state = used.get(stream);
  if (!state) {
    const s = { closed: false };
    state = s;
    used.set(stream, s);
    stream.on("error", () => {
      s.closed = true;
    });
  }
  return { stream, state };
}

function write(get: () => Stream, text: string): void {
  const { stream, state } = streamFor(get);
  if (!state.closed && !stream.writableEnded) stream.write(text);
}

export const writeOut = (text: string): void => write(() => process.stdout, text);
export const writeErr = (text: string): void => write(() => process.stderr, text);

/** Resolves once everything written through writeOut/writeErr reached the OS (or its reader is gone). */
export function stdioWritten(): Promise<void> {
  return Promise.all(
    [...used].map(
      ([stream, state]) =>
        new Promise<void>((resolve) => {
          if (state.closed || stream.writableFinished) return resolve();
          stream.once("error", () => resolve());
          stream.end(() => resolve());
        }),
    ),
  ).then(() => undefined);
}
