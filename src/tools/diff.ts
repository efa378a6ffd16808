/** Line diffs for showing what an edit changed. Pure. */

export type DiffOp = { kind: " " | "-" | "+"; line: string };

/** Beyond this many differences the changed middle is shown as one replacement. */
const MAX_EDIT_DISTANCE = 2000;

/** Myers' O((N+M)D) shortest edit script, keeping only each round's live diagonals. */
function myers(a: readonly string[], b: readonly string[]): DiffOp[] | null {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  const v = new Int32Array(2 * max + 3);
  const at = (k: number) => k + max + 1;
  const trace: Int32Array[] = [];
  let found = -1;
  for (let d = 0; d <= Math.min(max, MAX_EDIT_DISTANCE); d++) {
    trace.push(v.slice(at(-d - 1), at(d + 1) + 1));
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[at(k - 1)] < v[at(k + 1)]) ? v[at(k + 1)] : v[at(k - 1)] + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[at(k)] = x;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
    if (found !== -1) break;
  }
  if (found === -1) return null;

  const ops: DiffOp[] = [];
  let x = n;
  let y = m;
  for (let d = found; d >= 0; d--) {
    const saved = trace[d];
    const get = (k: number) => saved[k + d + 1];
    const k = x - y;
    const prevK = k === -d || (k !== d && get(k - 1) < get(k + 1)) ? k + 1 : k - 1;
    const prevX = d === 0 ? 0 : get(prevK);
    const prevY = d === 0 ? 0 : prevX - prevK;
    while (x > prevX && y > prevY) {
      y--;
      ops.push({ kind: " ", line: a[--x] });
    }
    if (d > 0) {
      if (x === prevX) ops.push({ kind: "+", line: b[--y] });
      else ops.push({ kind: "-", line: a[--x] });
    }
  }
  return ops.reverse();
}

/** Line-level edit script turning `a` into `b`, minimal unless the two differ in very many places. */
export function diffLines(a: readonly string[], b: readonly string[]): DiffOp[] {
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf++;
  const midA = a.slice(pre, a.length - suf);
  const midB = b.slice(pre, b.length - suf);
  const middle = myers(midA, midB) ?? [
    ...midA.map((line): DiffOp => ({ kind: "-", line })),
    ...midB.map((line): DiffOp => ({ kind: "+", line })),
  ];
  return [
    ...a.slice(0, pre).map((line): DiffOp => ({ kind: " ", line })),
    ...middle,
    ...a.slice(a.length - suf).map((line): DiffOp => ({ kind: " ", line })),
  ];
}

export interface EditDiff {
  /** The display form the reference's clients render: ` 12 context`, `-13 old`, `+13 new`, ` ... ` for skipped lines. Empty when nothing changed. */
  diff: string;
  /** A unified patch (`--- path` / `+++ path` headers, 4 lines of context); empty when nothing changed. */
  patch: string;
  /** 1-based line in the new text where the first change is; undefined when nothing changed. */
  firstChangedLine: number | undefined;
}

/** Lines shown around each change, in both forms. */
const CONTEXT = 4;

/**
 * The lines of a text, each keyed with its line feed so that a last line without one differs
 * from the same text with one (a patch must say "No newline at end of file").
 */
function keyedLines(text: string): string[] {
  if (text === "") return [];
  const parts = text.split("\n");
  const last = parts.pop()!;
  const keyed = parts.map((line) => `${line}\n`);
  if (last !== "") keyed.push(last);
  return keyed;
}

/** Each run of changes as its removals then its additions, as line diffs are conventionally shown. */
function grouped(ops: DiffOp[]): DiffOp[] {
  const out: DiffOp[] = [];
  for (let i = 0; i < ops.length; ) {
    if (ops[i]!.kind === " ") {
      out.push(ops[i++]!);
      continue;
    }
    const removed: DiffOp[] = [];
    const added: DiffOp[] = [];
    for (; i < ops.length && ops[i]!.kind !== " "; i++) (ops[i]!.kind === "-" ? removed : added).push(ops[i]!);
    out.push(...removed, ...added);
  }
  return out;
}

interface NumberedOp extends DiffOp {
  /** 1-based line numbers before and after the op (the next line's, for the side it is absent from). */
  oldNo: number;
  newNo: number;
}

function numbered(before: string, after: string): NumberedOp[] {
  let o = 1;
  let n = 1;
  return grouped(diffLines(keyedLines(before), keyedLines(after))).map((op) => {
    const out = { ...op, oldNo: o, newNo: n };
    if (op.kind !== "+") o++;
    if (op.kind !== "-") n++;
    return out;
  });
}

const strip = (line: string) => (line.endsWith("\n") ? line.slice(0, -1) : line);

/** The display and patch forms of the change from `before` to `after`, with `context` lines around each change. */
export function editDiff(before: string, after: string, path = "file", context = CONTEXT): EditDiff {
  const ops = numbered(before, after);
  const changes = ops.flatMap((op, i) => (op.kind === " " ? [] : [i]));
  if (changes.length === 0) return { diff: "", patch: "", firstChangedLine: undefined };
  return { diff: displayDiff(ops, before, after, context), patch: unifiedPatch(ops, changes, path, context), firstChangedLine: ops[changes[0]!]!.newNo };
}

function displayDiff(ops: NumberedOp[], before: string, after: string, context: number): string {
  const lineCount = (t: string) => t.split("\n").length;
  const width = String(Math.max(lineCount(before), lineCount(after))).length;
  const skipped = ` ${" ".repeat(width)} ...`;
  const out: string[] = [];
  const show = (op: NumberedOp) => out.push(`${op.kind}${String(op.kind === "+" ? op.newNo : op.oldNo).padStart(width)} ${strip(op.line)}`);
  for (let i = 0; i < ops.length; ) {
    if (ops[i]!.kind !== " ") {
      show(ops[i++]!);
      continue;
    }
    const start = i;
    while (i < ops.length && ops[i]!.kind === " ") i++;
    const run = ops.slice(start, i);
    const afterChange = start > 0;
    const beforeChange = i < ops.length;
    if (afterChange && beforeChange && run.length <= 2 * context) run.forEach(show);
    else {
      const head = afterChange ? run.slice(0, context) : [];
      const tail = beforeChange ? run.slice(Math.max(head.length, run.length - context)) : [];
      head.forEach(show);
      if (head.length + tail.length < run.length) out.push(skipped);
      tail.forEach(show);
    }
  }
  return out.join("\n");
}

function unifiedPatch(ops: NumberedOp[], changes: number[], path: string, context: number): string {
  const out = [`--- ${path}`, `+++ ${path}`];
  for (let c = 0; c < changes.length; ) {
    const from = Math.max(0, changes[c]! - context);
    let last = changes[c]!;
    while (c + 1 < changes.length && changes[c + 1]! - last - 1 <= 2 * context) last = changes[++c]!;
    c++;
    const hunk = ops.slice(from, Math.min(ops.length, last + context + 1));
    const oldCount = hunk.filter((op) => op.kind !== "+").length;
    const newCount = hunk.filter((op) => op.kind !== "-").length;
    const first = hunk[0]!;
    out.push(`@@ -${oldCount === 0 ? first.oldNo - 1 : first.oldNo},${oldCount} +${newCount === 0 ? first.newNo - 1 : first.newNo},${newCount} @@`);
    for (const op of hunk) {
      out.push(`${op.kind}${strip(op.line)}`);
      if (!op.line.endsWith("\n")) out.push("\\ No newline at end of file");
    }
  }
  return `${out.join("\n")}\n`;
}
