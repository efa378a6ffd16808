import { log } from "../util/log.ts";

const seen = new Set<string>();

/**
 * Run `fn` (a synchronous SDK call) with the SDK's `console.warn` notices (the Anthropic SDK
 * warns about deprecated models on every request) sent to stderr once per process each,
 * through pion's logger; `skip` drops the ones pion already reported itself.
 */
export function withSdkWarnings<T>(fn: () => T, skip?: (message: string) => boolean): T {
  const original = console.warn;
  console.warn = (...args: unknown[]) => {
    const message = args.map(String).join(" ");
    if (seen.has(message) || skip?.(message)) return;
    seen.add(message);
    log("sdk", message.replace(/\s*\n\s*/g, " "));
  };
  try {
    return fn();
  } finally {
    console.warn = original;
  }
}
