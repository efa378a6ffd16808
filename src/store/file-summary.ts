import { readFileSync } from "node:fs";
import { contentText, type SessionHeader } from "./entries.ts";
import { JSONL_VERSION } from "./jsonl.ts";

/**
 * What a session list needs of a JSONL session file, read without importing it: its header (as
 * v3) and a summary of its entries. Cheap: one read of the file, a parse of the header, of the
 * first user message, of `session_info` lines and of the last line only; every other line is
 * counted from its first bytes. Undefined for a file that is not a session file.
 */
export interface FileSummary {
  header: SessionHeader;
  name: string | null;
  firstMessage: string | null;
  messageCount: number;
  updatedAt: string;
}

const MESSAGE = Buffer.from('{"type":"message"');
const INFO = Buffer.from('{"type":"session_info"');
const USER = Buffer.from('"role":"user"');

export function summarizeFile(path: string): FileSummary | undefined {
  const data = readFileSync(path);
  let header: SessionHeader | undefined;
  let name: string | null = null;
  let firstMessage: string | null = null;
  let messageCount = 0;
  let updatedAt = "";
  let last: Buffer | undefined;
  for (let start = 0; start < data.length; ) {
    const found = data.indexOf(0x0a, start);
    const end = found === -1 ? data.length : found;
    const line = data.subarray(start, end);
    start = end + 1;
    if (line.length === 0 || (line.length === 1 && line[0] === 0x0d)) continue;
    if (!header) {
      header = headerOf(parse(line));
      if (!header) return undefined;
      updatedAt = header.timestamp;
      continue;
    }
    last = line;
    if (startsWith(line, MESSAGE)) {
      messageCount++;
      if (firstMessage === null && line.includes(USER)) firstMessage = userTextOf(parse(line));
    } else if (startsWith(line, INFO)) {
      const info = parse(line) as { name?: unknown } | undefined;
      if (info) name = typeof info.name === "string" && info.name.trim() ? info.name.trim() : null;
    } else if (!line.subarray(0, 9).equals(Buffer.from('{"type":"'))) {
      // Another writer's field order: parsed.
      const e = parse(line) as { type?: unknown } | undefined;
      if (e?.type === "message") {
        messageCount++;
        firstMessage ??= userTextOf(e);
      }
    }
  }
  if (!header) return undefined;
  const newest = last ? (parse(last) as { timestamp?: unknown } | undefined)?.timestamp : undefined;
  if (typeof newest === "string" && newest > updatedAt) updatedAt = newest;
  return { header, name, firstMessage, messageCount, updatedAt };
}

function startsWith(line: Buffer, prefix: Buffer): boolean {
  return line.length >= prefix.length && line.subarray(0, prefix.length).equals(prefix);
}

function parse(line: Buffer): unknown {
  try {
    return JSON.parse(line.toString("utf8"));
  } catch {
    return undefined; // a torn last line, or a line the import will name when the file is opened
  }
}

function headerOf(value: unknown): SessionHeader | undefined {
  const h = value as Record<string, unknown> | undefined;
  if (!h || h.type !== "session" || typeof h.id !== "string" || typeof h.timestamp !== "string") return undefined;
  if (typeof h.version === "number" && h.version > JSONL_VERSION) return undefined;
  return {
    type: "session",
    version: JSONL_VERSION,
    id: h.id,
    timestamp: h.timestamp,
    cwd: typeof h.cwd === "string" ? h.cwd : "",
    ...(typeof h.parentSession === "string" ? { parentSession: h.parentSession } : {}),
  };
}

function userTextOf(value: unknown): string | null {
  const m = (value as { message?: { role?: unknown; content?: unknown } } | undefined)?.message;
  if (!m || m.role !== "user") return null;
  return contentText(m.content) || null;
}
