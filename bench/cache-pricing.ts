/**
 * Prices Anthropic Messages request bodies under the documented prompt-caching rules, and bounds
 * from below what any placement of breakpoints could cost for the same requests. A pure module:
 * bench/prompt-cache.ts feeds it the bodies the fake provider recorded, test/unit/bench checks it.
 *
 * The rules, as Anthropic documents them:
 * - The cache order is tools, then system, then the messages' content blocks. A block with
 *   `cache_control` is a breakpoint; the prefix ending at each breakpoint is a cache entry.
 * - From each breakpoint the cache looks for an entry of an earlier request at that position and
 *   back, 20 positions in all (the breakpoint's own included); a read covers the longest prefix
 *   found so, over all the request's breakpoints. Cache reads cost 0.1× the input price.
 * - Everything after the read up to the request's last breakpoint is written (1.25×); what
 *   follows the last breakpoint is plain input (1×).
 * Left out, the same for every placement: the 5-minute lifetime (a bench session takes seconds),
 * the minimum cacheable length (1,024+ tokens), and thinking-parameter changes (the bench keeps
 * one model and level; the model id roots every prefix).
 *
 * Tokens are estimated, the same way for every placement: a block costs ceil(bytes / 4) of its
 * JSON without `cache_control`. Two blocks are the same when their JSON is, and they are the same
 * position of two requests when everything before them is the same too (a prefix tree).
 */

export interface Block {
  /** Identity: role and message boundary, plus the block's JSON without cache_control. */
  key: string;
  tokens: number;
  breakpoint: boolean;
}

export interface Rates {
  read: number;
  write: number;
  /** Positions looked at from each breakpoint, its own included. */
  lookback: number;
}

export const ANTHROPIC_RATES: Rates = { read: 0.1, write: 1.25, lookback: 20 };

type Json = Record<string, unknown>;

function block(prefix: string, value: unknown): Block {
  let breakpoint = false;
  let plain = value;
  if (value && typeof value === "object" && "cache_control" in value) {
    const { cache_control, ...rest } = value as Json;
    breakpoint = cache_control != null;
    plain = rest;
  }
  const json = JSON.stringify(plain);
  return { key: `${prefix}${json}`, tokens: Math.ceil(Buffer.byteLength(json) / 4), breakpoint };
}

/** The blocks of one request body in cache order. A string content counts as one text block. */
export function blocksOf(body: unknown): Block[] {
  const b = body as { model?: string; tools?: unknown[]; system?: string | unknown[]; messages?: { role: string; content: string | unknown[] }[] };
  const out: Block[] = [];
  for (const t of b.tools ?? []) out.push(block("tool:", t));
  const system = typeof b.system === "string" ? [{ type: "text", text: b.system }] : (b.system ?? []);
  for (const s of system) out.push(block("system:", s));
  for (const m of b.messages ?? []) {
    const content = typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
    content.forEach((c, i) => out.push(block(`${m.role}${i === 0 ? "|" : "+"}`, c)));
  }
  // The model roots the prefix: another model's cache is another cache.
  if (out.length > 0) out[0] = { ...out[0]!, key: `${b.model ?? ""}\n${out[0]!.key}` };
  return out;
}

/** Each request's blocks as prefix-tree node ids: equal ids, equal prefixes. */
function prefixIds(requests: readonly Block[][]): number[][] {
  const ids = new Map<string, number>();
  return requests.map((blocks) => {
    let parent = -1;
    return blocks.map((b) => {
      const k = `${parent}\u0000${b.key}`;
      let id = ids.get(k);
      if (id === undefined) ids.set(k, (id = ids.size));
      parent = id;
      return id;
    });
  });
}

export interface RequestPrice {
  /** Input tokens, all at the plain price. */
  uncached: number;
  read: number;
  written: number;
  plain: number;
  /** read × rate + written × rate + plain, in plain-input tokens. */
  billed: number;
}

export interface SessionPrice {
  requests: RequestPrice[];
  uncached: number;
  billed: number;
}

const sum = (blocks: readonly Block[], from: number, to: number) => {
  let n = 0;
  for (let i = from; i <= to; i++) n += blocks[i]!.tokens;
  return n;
};

/** Prices the requests in order, each reading what the earlier ones wrote. */
export function priceRequests(requests: readonly Block[][], rates: Rates = ANTHROPIC_RATES): SessionPrice {
  const ids = prefixIds(requests);
  const cached = new Set<number>();
  const priced: RequestPrice[] = [];
  requests.forEach((blocks, r) => {
    const id = ids[r]!;
    const breakpoints = blocks.flatMap((b, i) => (b.breakpoint ? [i] : []));
    let readEnd = -1;
    for (const bp of breakpoints) {
      for (let j = bp; j > bp - rates.lookback && j > readEnd; j--) {
        if (cached.has(id[j]!)) {
          readEnd = j;
          break;
        }
      }
    }
    const last = breakpoints.at(-1) ?? -1;
    const read = sum(blocks, 0, readEnd);
    const written = sum(blocks, readEnd + 1, last);
    const plain = sum(blocks, Math.max(readEnd, last) + 1, blocks.length - 1);
    priced.push({ uncached: read + written + plain, read, written, plain, billed: rates.read * read + rates.write * written + plain });
    for (const bp of breakpoints) cached.add(id[bp]!);
  });
  return { requests: priced, uncached: priced.reduce((a, p) => a + p.uncached, 0), billed: priced.reduce((a, p) => a + p.billed, 0) };
}

/**
 * A lower bound on what any placement of breakpoints could be billed for these requests, in
 * plain-input tokens. Take one position of the prefix tree, held by m of the requests. The first
 * of them cannot read it (no earlier request holds that prefix), so it pays it plain (1×) or
 * writes it (1.25×); a later one reads it (0.1×) only if an earlier one wrote it, else pays
 * at least 1×. So the position costs at least min(m × 1, 1.25 + 0.1 × (m − 1)) times its tokens,
 * whatever the placement, and the sum over positions bounds the total. It ignores the four-
 * breakpoint limit and the lookback, which can only make the best placement dearer: a placement
 * within x% of this bound is within x% of the best one.
 */
export function bestBound(requests: readonly Block[][], rates: Rates = ANTHROPIC_RATES): number {
  const ids = prefixIds(requests);
  const held = new Map<number, { tokens: number; m: number }>();
  requests.forEach((blocks, r) =>
    ids[r]!.forEach((id, i) => {
      const h = held.get(id);
      if (h) h.m++;
      else held.set(id, { tokens: blocks[i]!.tokens, m: 1 });
    }),
  );
  let bound = 0;
  for (const { tokens, m } of held.values()) bound += tokens * Math.min(m, rates.write + rates.read * (m - 1));
  return bound;
}
