import { log } from "../util/log.ts";

const seen = new Set<string>();

function text(a: unknown): string {
  if (typeof a === "string") return a;
  if (a instanceof Error) return a.message;
  try {
    return JSON.stringify(a) ?? String(a);
  } catch {
    return String(a);
  }
}

/** Once per process per distinct message, on one stderr line. */
function warnOnce(args: unknown[], skip?: (message: string) => boolean): void {
  const message = args.map(text).join(" ");
  if (seen.has(message) || skip?.(message)) return;
  seen.add(message);
  log("sdk", message.replace(/\s*\n\s*/g, " "));
}

/**
 * The `logger` both SDKs accept: their warnings and errors go through warnOnce (the default
 * would print them with console, once per request); info and debug (shown only when
 * ANTHROPIC_LOG / OPENAI_LOG ask for them) go to stderr as they come.
 */
export const sdkLogger = {
  error: (...args: unknown[]) => warnOnce(args),
  warn: (...args: unknown[]) => warnOnce(args),
  info: (...args: unknown[]) => log("sdk", args.map(text).join(" ")),
  debug: (...args: unknown[]) => log("sdk", args.map(text).join(" ")),
};

/**
 * Run `fn` (a synchronous SDK call) with the SDK's direct `console.warn` notices (the Anthropic
 * SDK warns about deprecated models on every request, bypassing its logger) sent through
 * warnOnce; `skip` drops the ones pion already reported itself.
 */
export function withSdkWarnings<T>(fn: () => T, skip?: (message: string) => boolean): T {
  const original = console.warn;
  console.warn = (...args: unknown[]) => warnOnce(args, skip);
  try {
    return fn();
  } finally {
    console.warn = original;
  }
}
