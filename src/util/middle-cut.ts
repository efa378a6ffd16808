/**
 * Long text cut in the middle (its start and end kept around a `…N chars truncated…` marker),
 * and the temp files that keep the whole of it (0600, never overwritten).
 */
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Writes `text` to a new temp file and answers its path. */
export function saveTempFile(text: string | Uint8Array, ext: string, prefix = "pion-"): string {
  const id = Buffer.from(crypto.getRandomValues(new Uint8Array(8))).toString("hex");
  const path = join(tmpdir(), `${prefix}${id}${ext}`);
  writeFileSync(path, text, { mode: 0o600, flag: "wx" });
  return path;
}

/** The first and last `limit / 2` bytes of `text` (at character boundaries) around a marker counting the characters left out. */
export function cutMiddle(text: string, limit: number): string {
  const buf = Buffer.from(text, "utf8");
  const start = (i: number) => i >= buf.length || (buf[i]! & 0xc0) !== 0x80;
  let head = Math.floor(limit / 2);
  while (head > 0 && !start(head)) head--;
  let tail = buf.length - (limit - Math.floor(limit / 2));
  while (tail < buf.length && !start(tail)) tail++;
  if (tail <= head) return text;
  const removed = [...buf.subarray(head, tail).toString("utf8")].length;
  return `${buf.subarray(0, head).toString("utf8")}…${removed} chars truncated…${buf.subarray(tail).toString("utf8")}`;
}
