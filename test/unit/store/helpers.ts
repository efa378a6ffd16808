import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Entry, MessageEntry, SessionHeader } from "../../../src/store/entries.ts";
import { readJsonl } from "../../../src/store/jsonl.ts";
import type { StoredEntry } from "../../../src/store/store.ts";

/** An entry as the store is given it by an import. */
export const stored = (entry: Entry): StoredEntry => ({ entry, body: JSON.stringify(entry) });

/** A session file read whole: what an import would write. */
export function importJsonl(path: string) {
  const src = readJsonl(path);
  const rows = [...src.entries()];
  const entries = rows.map((r) => r.entry);
  return { header: src.header, entries, bodies: rows.map((r) => r.body), leafId: entries.at(-1)?.id ?? null, version: src.version, tornTail: src.tornTail };
}

/** The same for `text` written to a file named `name` in a temp folder (errors name that path). */
export function parseJsonl(text: string, name = "session.jsonl") {
  const dir = mkdtempSync(join(tmpdir(), "pion-jsonl-"));
  try {
    const path = join(dir, name);
    writeFileSync(path, text);
    return importJsonl(path);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A temp folder removed on dispose: `using dir = tempDir()`. */
export function tempDir(): { path: string; [Symbol.dispose](): void } {
  const path = mkdtempSync(join(tmpdir(), "pion-store-"));
  return { path, [Symbol.dispose]: () => rmSync(path, { recursive: true, force: true }) };
}

let clock = Date.parse("2026-01-01T00:00:00.000Z");
/** Strictly increasing ISO timestamps. */
export const tick = (): string => new Date((clock += 1000)).toISOString();

export function header(id: string, cwd = "/home/user/project", parentSession?: string): SessionHeader {
  return { type: "session", version: 3, id, timestamp: tick(), cwd, ...(parentSession ? { parentSession } : {}) };
}

export function user(id: string, parentId: string | null, text: string, timestamp = tick()): MessageEntry {
  return {
    type: "message",
    id,
    parentId,
    timestamp,
    message: { role: "user", content: [{ type: "text", text }], timestamp: Date.parse(timestamp) },
  };
}

export function assistant(id: string, parentId: string | null, text: string, timestamp = tick()): MessageEntry {
  return {
    type: "message",
    id,
    parentId,
    timestamp,
    message: {
      role: "assistant",
      content: [{ type: "text", text }],
      api: "anthropic-messages",
      provider: "fake",
      model: "fake-model",
      usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
      stopReason: "stop",
      timestamp: Date.parse(timestamp),
    },
  };
}

export function bash(id: string, parentId: string | null, command: string, output: string): MessageEntry {
  const timestamp = tick();
  return {
    type: "message",
    id,
    parentId,
    timestamp,
    message: { role: "bashExecution", command, output, exitCode: 0, cancelled: false, truncated: false, timestamp: Date.parse(timestamp) },
  };
}

/** `n` entries chained root first: user/assistant alternating, ids e0000000, e0000001, … */
export function chain(n: number, prefix = "e"): Entry[] {
  const out: Entry[] = [];
  const t0 = Date.parse("2026-02-01T00:00:00.000Z");
  for (let i = 0; i < n; i++) {
    const id = `${prefix}${i.toString(16).padStart(7, "0")}`;
    const parentId = i === 0 ? null : out[i - 1]!.id;
    const timestamp = new Date(t0 + i).toISOString();
    out.push(i % 2 === 0 ? user(id, parentId, `question ${i}`, timestamp) : assistant(id, parentId, `answer ${i}`, timestamp));
  }
  return out;
}

export const ids = (entries: readonly Entry[]): string[] => entries.map((e) => e.id);
