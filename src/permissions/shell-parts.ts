/**
 * The commands a bash command line runs, for permission rules: the pieces between `;`,
 * `&&`, `||`, `|`, `&` and newlines, and the contents of `$( )`, `` ` ` ``, `<( )`, `>( )`
 * and `( )` subshells (recursively), each trimmed. Quotes are respected, so
 * `git commit -m "a; b"` is one command. The split errs towards more pieces: a piece that
 * matches no allow rule makes the call ask, never run. `undefined` when the line cannot be
 * read (an unclosed quote or substitution): no allow rule may match such a line.
 */
export function commandParts(command: string): string[] | undefined {
  const out: string[] = [];
  const r = scan(command, 0, undefined, out);
  return r.ok ? out : undefined;
}

type Scan = { ok: true; end: number } | { ok: false };

function scan(s: string, start: number, close: ")" | "`" | undefined, out: string[]): Scan {
  let seg = "";
  const flush = () => {
    const t = seg.trim();
    if (t) out.push(t);
    seg = "";
  };
  let i = start;
  while (i < s.length) {
    const c = s[i]!;
    if (c === close) {
      flush();
      return { ok: true, end: i + 1 };
    }
    if (c === "\\") {
      seg += s.slice(i, i + 2);
      i += 2;
      continue;
    }
    if (c === "'") {
      const j = s.indexOf("'", i + 1);
      if (j < 0) return { ok: false };
      seg += s.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    if (c === '"') {
      const r = doubleQuoted(s, i + 1, out);
      if (!r.ok) return r;
      seg += s.slice(i, r.end);
      i = r.end;
      continue;
    }
    if ((c === "$" || c === "<" || c === ">") && s[i + 1] === "(") {
      const r = scan(s, i + 2, ")", out);
      if (!r.ok) return r;
      seg += s.slice(i, r.end);
      i = r.end;
      continue;
    }
    if (c === "`") {
      const r = scan(s, i + 1, "`", out);
      if (!r.ok) return r;
      seg += s.slice(i, r.end);
      i = r.end;
      continue;
    }
    if (c === "(") {
      // A subshell or group: its commands are pieces of their own.
      const r = scan(s, i + 1, ")", out);
      if (!r.ok) return r;
      i = r.end;
      continue;
    }
    const redirect = /[<>]$/.test(seg);
    if (c === ";" || c === "\n") {
      flush();
      i++;
      continue;
    }
    if (c === "&" && !redirect && s[i + 1] !== ">") {
      flush();
      i += s[i + 1] === "&" ? 2 : 1;
      continue;
    }
    if (c === "|" && !redirect) {
      flush();
      i += s[i + 1] === "|" || s[i + 1] === "&" ? 2 : 1;
      continue;
    }
    seg += c;
    i++;
  }
  if (close !== undefined) return { ok: false };
  flush();
  return { ok: true, end: i };
}

/** From just after an opening `"` to just after its closing one; substitutions inside still run. */
function doubleQuoted(s: string, start: number, out: string[]): Scan {
  let j = start;
  while (j < s.length && s[j] !== '"') {
    if (s[j] === "\\") j += 2;
    else if (s[j] === "$" && s[j + 1] === "(") {
      const r = scan(s, j + 2, ")", out);
      if (!r.ok) return r;
      j = r.end;
    } else if (s[j] === "`") {
      const r = scan(s, j + 1, "`", out);
      if (!r.ok) return r;
      j = r.end;
    } else j++;
  }
  return j < s.length ? { ok: true, end: j + 1 } : { ok: false };
}
