/**
 * The glob dialect of permission rules: `*` and `?` (within one path segment when
 * `segments` is set, anything otherwise), `**` across segments, `\` makes the next
 * character literal. Everything else is literal: a rule is a policy, and a bracket or
 * brace in a command should not silently widen it.
 */
export function globToRegExp(pattern: string, segments: boolean): RegExp {
  const one = segments ? "[^/]" : "[\\s\\S]";
  let out = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "\\" && i + 1 < pattern.length) {
      out += escapeRegExp(pattern[++i]!);
    } else if (c === "*" && pattern[i + 1] === "*") {
      i++;
      // `a/**/b` also matches `a/b`; a trailing `/**` everything below the folder.
      if (out.endsWith("/") && pattern[i + 1] === "/") {
        out = `${out.slice(0, -1)}(?:/[\\s\\S]*)?`;
      } else out += "[\\s\\S]*";
    } else if (c === "*") {
      out += `${one}*`;
    } else if (c === "?") {
      out += one;
    } else {
      out += escapeRegExp(c);
    }
  }
  return new RegExp(`^${out}$`);
}

/** A pattern that matches exactly `text`. */
export function escapeGlob(text: string): string {
  return text.replace(/[\\*?]/g, (c) => `\\${c}`);
}

function escapeRegExp(c: string): string {
  return /[.*+?^${}()|[\]\\]/.test(c) ? `\\${c}` : c;
}
