import type { Rec } from "./record-log.ts";

/**
 * The shape of a JSON value as a set of key paths, values ignored: `a` for a key, `a.b` below it,
 * `a[]` for a non-empty array and `a[].b` for the union of its elements' keys. `{"a": {}}` gives
 * `a` alone; `{"a": []}` gives `a` alone; `{"a": [1]}` gives `a` and `a[]`.
 */
export function keyPaths(value: unknown, prefix = "", out = new Set<string>()): Set<string> {
  if (Array.isArray(value)) {
    if (value.length > 0) out.add(`${prefix}[]`);
    for (const el of value) keyPaths(el, `${prefix}[]`, out);
  } else if (typeof value === "object" && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      const path = prefix === "" ? k : `${prefix}.${k}`;
      out.add(path);
      keyPaths(v, path, out);
    }
  }
  return out;
}

/**
 * What a record is for pairing with its counterpart: its type, refined by the message role
 * (`message_end:assistant`) or the streamed event (`message_update:text_delta`).
 */
export function recordKind(r: Rec): string {
  if (r.type === "message_update") return `message_update:${r.assistantMessageEvent?.type}`;
  if ((r.type === "message_start" || r.type === "message_end") && r.message?.role) return `${r.type}:${r.message.role}`;
  return String(r.type);
}

/** `pion` has the path and the reference does not, or the other way round. */
export type Side = "pion" | "reference";

/** One difference: `path` is `(record)` when a whole record is on one side only. */
export interface ShapeDifference {
  kind: string;
  path: string;
  /** The side that has it. */
  only: Side;
}

export const WHOLE_RECORD = "(record)";

/**
 * The shape differences between two record streams. The i-th record of a kind on one side is
 * compared with the i-th of that kind on the other; a record without a counterpart is one
 * `(record)` difference. `order` lists where the kinds of the paired records come in another order,
 * `message_update` records aside: how a provider's stream is cut into events is the pairing's
 * business, not the order's (docs/reference-differences.md says where they interleave differently).
 */
export function compareShapes(pion: Rec[], reference: Rec[]): { differences: ShapeDifference[]; order: string[] } {
  // Parallel tool calls may finish in either order: a tool's records pair with the same tool's
  // (stable by tool name, so the i-th write's end meets the i-th write's end).
  const toolOf = (r: Rec): string => String(r.toolName ?? r.message?.toolName ?? "");
  const byKind = (recs: Rec[]) => {
    const m = new Map<string, Rec[]>();
    for (const r of recs) m.set(recordKind(r), [...(m.get(recordKind(r)) ?? []), r]);
    for (const [kind, list] of m) if (list.some((r) => toolOf(r))) m.set(kind, [...list].sort((x, y) => toolOf(x).localeCompare(toolOf(y))));
    return m;
  };
  const mine = byKind(pion);
  const theirs = byKind(reference);
  const seen = new Set<string>();
  const differences: ShapeDifference[] = [];
  const add = (d: ShapeDifference) => {
    const key = `${d.kind}\0${d.path}\0${d.only}`;
    if (seen.has(key)) return;
    seen.add(key);
    differences.push(d);
  };
  const paired = new Map<string, number>();
  for (const kind of new Set([...mine.keys(), ...theirs.keys()])) {
    const a = mine.get(kind) ?? [];
    const b = theirs.get(kind) ?? [];
    const n = Math.min(a.length, b.length);
    paired.set(kind, n);
    if (a.length > n) add({ kind, path: WHOLE_RECORD, only: "pion" });
    if (b.length > n) add({ kind, path: WHOLE_RECORD, only: "reference" });
    for (let i = 0; i < n; i++) {
      const pa = keyPaths(a[i]);
      const pb = keyPaths(b[i]);
      for (const path of outermost(pa, pb)) add({ kind, path, only: "pion" });
      for (const path of outermost(pb, pa)) add({ kind, path, only: "reference" });
    }
  }
  const pairedKinds = (recs: Rec[]) => {
    const left = new Map(paired);
    return recs.map(recordKind).filter((k) => {
      if (k.startsWith("message_update:")) return false;
      const n = left.get(k) ?? 0;
      left.set(k, n - 1);
      return n > 0;
    });
  };
  const x = pairedKinds(pion);
  const y = pairedKinds(reference);
  const order: string[] = [];
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) order.push(`#${i}: pion ${x[i]}, reference ${y[i]}`);
  return { differences, order };
}

/** The paths of `a` missing from `b`, leaving out those below a missing one (`x.y` when `x` is missing). */
function outermost(a: Set<string>, b: Set<string>): string[] {
  const gone = [...a].filter((p) => !b.has(p));
  const isBelow = (p: string, q: string) => p.startsWith(`${q}.`) || p.startsWith(`${q}[]`);
  return gone.filter((p) => !gone.some((q) => q !== p && isBelow(p, q)));
}

/** A row of the table in docs/reference-differences.md. */
export interface DocumentedDifference {
  /** Glob over record kinds (`*` matches anything). */
  kind: string;
  /** Glob over key paths, or `(record)`. */
  path: string;
  only: Side;
  /** The provider APIs it occurs with; each must show it. */
  apis: string[];
  reason: string;
  line: number;
}

const PION_ONLY = "present vs absent";
const REFERENCE_ONLY = "absent vs present";

/**
 * The rows of the markdown table whose header starts with `| Record |`. Cells in backticks are
 * read without them; a malformed row throws, so a typo in the doc fails the test instead of
 * silently allowing nothing.
 */
export function parseDifferencesTable(markdown: string, allApis: readonly string[]): DocumentedDifference[] {
  const rows: DocumentedDifference[] = [];
  let inTable = false;
  for (const [i, raw] of markdown.split("\n").entries()) {
    const line = raw.trim();
    if (!line.startsWith("|")) {
      inTable = false;
      continue;
    }
    const cells = line.slice(1, line.endsWith("|") ? -1 : undefined).split("|").map((c) => c.trim());
    if (cells[0] === "Record") {
      inTable = true;
      continue;
    }
    if (!inTable || /^:?-+:?$/.test(cells[0] ?? "")) continue;
    const [kind, path, sides, apis, reason] = cells.map((c) => c.replace(/^`(.*)`$/, "$1"));
    const where = `docs/reference-differences.md:${i + 1}`;
    if (!kind || !path || !apis || !reason || cells.length !== 5) throw new Error(`${where}: a row needs 5 cells: ${line}`);
    if (sides !== PION_ONLY && sides !== REFERENCE_ONLY) throw new Error(`${where}: "${sides}" is neither "${PION_ONLY}" nor "${REFERENCE_ONLY}"`);
    const list = apis === "all" ? [...allApis] : apis.split(",").map((a) => a.replaceAll("`", "").trim());
    for (const a of list) if (!allApis.includes(a)) throw new Error(`${where}: unknown API "${a}"`);
    rows.push({ kind, path, only: sides === PION_ONLY ? "pion" : "reference", apis: list, reason, line: i + 1 });
  }
  return rows;
}

const globRe = (glob: string) => new RegExp(`^${glob.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*")}$`);

export function documents(row: DocumentedDifference, api: string, d: ShapeDifference): boolean {
  return row.only === d.only && row.apis.includes(api) && globRe(row.kind).test(d.kind) && globRe(row.path).test(d.path);
}

export const describeDifference = (d: ShapeDifference): string =>
  `${d.kind} ${d.path}: ${d.only === "pion" ? PION_ONLY : REFERENCE_ONLY} (pion vs reference)`;
