/**
 * JSON as people write config files by hand, read the way the reference reads its models.json:
 * a leading BOM, `//` line comments and trailing commas before `}` or `]` are allowed. Text
 * inside strings is never touched. Anything else must be plain JSON.
 */
export function parseLooseJson(text: string): unknown {
  return JSON.parse(stripLoose(text.replace(/^\uFEFF/, "")));
}

function stripLoose(text: string): string {
  let out = "";
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === '"') {
      const end = stringEnd(text, i);
      out += text.slice(i, end);
      i = end;
    } else if (ch === "/" && text[i + 1] === "/") {
      const nl = text.indexOf("\n", i);
      i = nl < 0 ? text.length : nl;
    } else if (ch === ",") {
      let j = i + 1;
      while (j < text.length && /\s/.test(text[j]!)) j++;
      if (text[j] !== "}" && text[j] !== "]") out += ch;
      i++;
    } else {
      out += ch;
      i++;
    }
  }
  return out;
}

/** Index just past the string literal that opens at `start` (or the end of the text). */
function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === '"') return i + 1;
  }
  return text.length;
}
