/** Line diffs for showing what an edit changed. Pure. */

export type DiffOp = { kind: " " | "-" | "+"; line: string };

/** Beyond this many differences the changed middle is shown as one replacement. */
const MAX_EDIT_DISTANCE = 2000;

function toLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

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

export interface LineDiff {
  /** Unified diff; empty when nothing changed. */
  diff: string;
  /** 1-based line in the new text where the first change is; undefined when nothing changed. */
  firstChangedLine: number | undefined;
}

export function unifiedDiff(before: string, after: string, path = "file", context = 3): LineDiff {
  const ops = diffLines(toLines(before), toLines(after));
  const oldNo: number[] = [];
  const newNo: number[] = [];
  let o = 0;
  let nw = 0;
  for (const op of ops) {
    oldNo.push(o);
    newNo.push(nw);
    if (op.kind !== "+") o++;
    if (op.kind !== "-") nw++;
  }
  const changes = ops.flatMap((op, i) => (op.kind === " " ? [] : [i]));
  if (changes.length === 0) return { diff: "", firstChangedLine: undefined };

  const out = [`--- a/${path}`, `+++ b/${path}`];
  for (let c = 0; c < changes.length; ) {
    const from = Math.max(0, changes[c] - context);
    let last = changes[c];
    while (c + 1 < changes.length && changes[c + 1] - last - 1 <= 2 * context) last = changes[++c];
    c++;
    const to = Math.min(ops.length, last + context + 1);
    const hunk = ops.slice(from, to);
    const oldCount = hunk.filter((op) => op.kind !== "+").length;
    const newCount = hunk.filter((op) => op.kind !== "-").length;
    const oldStart = oldCount === 0 ? oldNo[from] : oldNo[from] + 1;
    const newStart = newCount === 0 ? newNo[from] : newNo[from] + 1;
    out.push(`@@ -${oldStart},${oldCount} +${newStart},${newCount} @@`);
    for (const op of hunk) out.push(`${op.kind}${op.line}`);
  }
  return { diff: `${out.join("\n")}\n`, firstChangedLine: newNo[changes[0]] + 1 };
}
