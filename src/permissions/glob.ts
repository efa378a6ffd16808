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

/**
 * Whether some text starting with `prefix` matches `pattern` (read as a command pattern,
 * `*` across everything): a command whose later words are known only when it runs may be
 * any of those texts.
 */
export function globAcceptsPrefix(pattern: string, prefix: string): boolean {
  type Token = { any: true; many: boolean } | { any: false; char: string };
  const tokens: Token[] = [];
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "\\" && i + 1 < pattern.length) tokens.push({ any: false, char: pattern[++i]! });
    else if (c === "*") {
      while (pattern[i + 1] === "*") i++;
      tokens.push({ any: true, many: true });
    } else if (c === "?") tokens.push({ any: true, many: false });
    else tokens.push({ any: false, char: c });
  }
  // The positions in the pattern the prefix read so far can have reached.
  const closure = (states: Set<number>): Set<number> => {
    for (const s of [...states]) for (let k = s; k < tokens.length && tokens[k]!.any && (tokens[k] as { many: boolean }).many; k++) states.add(k + 1);
    return states;
  };
  let states = closure(new Set([0]));
  for (const ch of prefix) {
    const next = new Set<number>();
    for (const s of states) {
      const t = tokens[s];
      if (!t) continue;
      if (t.any && t.many) next.add(s);
      else if (t.any || t.char === ch) next.add(s + 1);
    }
    states = closure(next);
    if (states.size === 0) return false;
  }
  return states.size > 0;
}
