/**
 * pi-ai's JSON helpers for tool-call arguments, on the lenient parse pion's providers use when a
 * tool call ends (providers/transform.ts): JSON.parse, retried once with string literals mended.
 */
import { mendStrings, parseLenient } from "../../providers/transform.ts";

export const repairJson = (json: string): string => mendStrings(json);

export const parseJsonWithRepair = <T>(json: string): T => parseLenient(json) as T;

/**
 * A finished call's arguments text as the reference reports it: `{}` for blank text; text that is
 * not a JSON object gives `{}` and an `argumentsError` quoting all of it. (pion's own loop words
 * that error for its model itself, in setToolArguments.)
 */
export function parseToolCallArguments(json: string | undefined): { arguments: Record<string, unknown>; argumentsError?: string } {
  if (!json?.trim()) return { arguments: {} };
  try {
    const value = parseLenient(json);
    if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error("Tool arguments must be a JSON object");
    return { arguments: value as Record<string, unknown> };
  } catch (err) {
    return { arguments: {}, argumentsError: `${err instanceof Error ? err.message : String(err)}\n\nReceived arguments:\n${json}` };
  }
}

/**
 * The value of streamed JSON text so far, never throwing: the text itself when it parses (with
 * repair), else its complete prefix read leniently, else that of the repaired text, else `{}`.
 */
export function parseStreamingJson<T = Record<string, unknown>>(partialJson: string | undefined): T {
  if (!partialJson?.trim()) return {} as T;
  const attempts = [() => parseLenient(partialJson), () => readPrefix(partialJson), () => readPrefix(mendStrings(partialJson))];
  for (const attempt of attempts) {
    try {
      return (attempt() ?? {}) as T;
    } catch {
      // the next, more lenient reading
    }
  }
  return {} as T;
}

class Unreadable extends Error {}

/** The words a value may be, each with how many characters of it must have arrived when cut short. */
const WORDS: [string, unknown, number][] = [
  ["null", null, 1],
  ["true", true, 1],
  ["false", false, 1],
  ["Infinity", Infinity, 1],
  ["-Infinity", -Infinity, 2],
  ["NaN", NaN, 1],
];

/**
 * The value of a cut-off JSON document, read as the `partial-json` package reads it with every
 * kind of value allowed to be partial (the reference's parseStreamingJson relies on exactly that,
 * quirks included, so this reads the same): an open string shows what arrived (an escape cut in
 * half dropped), an open container what it holds so far, a member whose value has not started
 * is left out, a literal cut short (`tr`, `nu`, `-Inf`) is its whole value at the very end of the
 * text, a number cut in its exponent is its mantissa. Whitespace around the text is trimmed first.
 * Throws when nothing can be read; text after the first value is ignored. One deliberate
 * difference: a `__proto__` key becomes an own member (as JSON.parse makes it), where partial-json
 * sets the object's prototype.
 */
function readPrefix(raw: string): unknown {
  const s = raw.trim();
  if (!s) throw new Unreadable("empty");
  const n = s.length;
  let i = 0;
  const fail = (why: string): never => {
    throw new Unreadable(`${why} at ${i}`);
  };
  const skipBlank = () => {
    while (i < n && " \n\r\t".includes(s[i]!)) i++;
  };

  const value = (): unknown => {
    skipBlank();
    if (i >= n) fail("end of text");
    const c = s[i];
    if (c === '"') return string();
    if (c === "{") return object();
    if (c === "[") return array();
    const rest = n - i;
    for (const [word, v, atLeast] of WORDS) {
      if (s.startsWith(word, i) || (rest >= atLeast && rest < word.length && word.startsWith(s.slice(i)))) {
        i += word.length;
        return v;
      }
    }
    return number();
  };

  // Starts at a quote, or at whatever stands where a key should: that character counts as the opening quote.
  const string = (): unknown => {
    const start = i++;
    let escaped = false;
    while (i < n && (s[i] !== '"' || (escaped && s[i - 1] === "\\"))) {
      escaped = s[i] === "\\" ? !escaped : false;
      i++;
    }
    if (s[i] === '"') {
      i++;
      try {
        return JSON.parse(s.substring(start, i));
      } catch (err) {
        return fail(String(err));
      }
    }
    try {
      return JSON.parse(`${s.substring(start, escaped ? i - 1 : i)}"`);
    } catch {
      return JSON.parse(`${s.substring(start, s.lastIndexOf("\\"))}"`);
    }
  };

  /**
   * Members up to `close`, comma-separated (a missing comma is not missed); `member` reads one and
   * says whether to go on. Whatever stops the reading, the container holds what was read.
   */
  const container = <C>(out: C, close: string, member: () => boolean): C => {
    try {
      while (s[i] !== close) {
        if (!member()) return out;
        skipBlank();
        if (s[i] === ",") i++;
      }
    } catch {
      return out;
    }
    i++;
    return out;
  };

  const object = (): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    i++;
    skipBlank();
    return container(out, "}", () => {
      skipBlank();
      if (i >= n) return false;
      const key = String(string());
      skipBlank();
      i++; // the colon, or whatever stands in its place
      let member: unknown;
      try {
        member = value();
      } catch {
        return false;
      }
      Object.defineProperty(out, key, { value: member, writable: true, enumerable: true, configurable: true });
      return true;
    });
  };

  const array = (): unknown[] => {
    const out: unknown[] = [];
    i++;
    return container(out, "]", () => out.push(value()) > 0);
  };

  // A number is everything up to the next `,`, `]` or `}`; at the top level, the whole text.
  const number = (): unknown => {
    const start = i;
    if (start > 0) {
      if (s[i] === "-") i++;
      while (i < n && !",]}".includes(s[i]!)) i++;
    }
    const token = s.substring(start, start > 0 ? i : n);
    try {
      return JSON.parse(token);
    } catch (err) {
      if (token === "-") fail("a lone minus");
      try {
        // Cut at the text's last "e", wherever it is: what partial-json does, and so the reference.
        return JSON.parse(s.substring(start, s.lastIndexOf("e")));
      } catch {
        return fail(String(err));
      }
    }
  };

  return value();
}
