/**
 * Pages of stored JSON as the answers that stream a whole session write them: the UTF-8 bytes
 * SQLite holds, joined by commas, never decoded into strings and encoded again (at 100k entries
 * that was a 100 MB string made and converted back for each answer).
 */

import type { ChainPage } from "./store.ts";

const COMMA = new Uint8Array([0x2c]);
const utf8 = new TextEncoder();
const text = new TextDecoder();
const MESSAGE_KEY = utf8.encode('"message":');

/** The bodies of a page of rows, comma-joined. */
export function joinBodies(rows: readonly (readonly [number, Uint8Array])[]): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const r of rows) {
    if (parts.length > 0) parts.push(COMMA);
    parts.push(r[1]);
  }
  return Buffer.concat(parts);
}

/**
 * The messages of a page of `message` rows (seq, body, message_at), comma-joined. Where the body
 * has the layout `message_at` records (the message the body's last field, starting at that offset),
 * the message is the body's bytes from there to the closing brace. The offset counts UTF-16 units,
 * the same as bytes only while everything before it is ASCII (an id or time from another tool may
 * hold anything): it is one exactly when the 10 bytes before it are `"message":`, since that text
 * occurs once before the message, as its key (in a JSON string a quote is escaped, and the type's
 * value "message" is followed by a comma), and a non-ASCII prefix puts the key's bytes after the
 * offset. Any other row is parsed.
 */
export function joinMessages(rows: readonly (readonly [number, Uint8Array, number | null])[], parse: (body: string, seq: number) => string): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const [seq, body, at] of rows) {
    if (parts.length > 0) parts.push(COMMA);
    parts.push(at !== null && sliceable(body, at) ? body.subarray(at, body.length - 1) : utf8.encode(parse(text.decode(body), seq)));
  }
  return Buffer.concat(parts);
}

function sliceable(body: Uint8Array, at: number): boolean {
  if (at < MESSAGE_KEY.length || at >= body.length || body[body.length - 1] !== 0x7d) return false;
  for (let i = 0; i < MESSAGE_KEY.length; i++) if (body[at - MESSAGE_KEY.length + i] !== MESSAGE_KEY[i]) return false;
  return true;
}

/** A ChainPage of rows (seq, id, the node's opening bytes, a label's body). */
export function chainPage(rows: readonly (readonly [number, string, Uint8Array, string | null])[]): ChainPage {
  const ids: string[] = [];
  const labels: string[] = [];
  for (const r of rows) {
    ids.push(r[1]);
    if (r[3] !== null) labels.push(r[3]);
  }
  return { openings: Buffer.concat(rows.map((r) => r[2])), ids, labels };
}
