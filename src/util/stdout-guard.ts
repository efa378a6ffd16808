/**
 * Once extensions run in a process whose stdout carries a protocol (pion writes it through
 * `Bun.stdout`, never `process.stdout` or `console`), what they print with `console.log` and
 * friends or `process.stdout.write` goes to stderr instead, so a stray line (or a terminal
 * escape sequence) can never corrupt a client's parser. Applied once per process.
 */
let diverted = false;

export function divertStdout(): void {
  if (diverted) return;
  diverted = true;
  for (const name of ["log", "info", "debug", "dir", "table"] as const) console[name] = console.error;
  // Redefined rather than patched: touching process.stdout would build its stream (memory, start-up).
  Object.defineProperty(process, "stdout", { configurable: true, get: () => process.stderr });
}
