import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExtensionMessage, ExtensionMode, ExtensionSessionPort, SendMessageOptions } from "../../../src/extensions/types.ts";

export const FIXTURES = join(import.meta.dir, "../../fixtures/extensions");
export const fixture = (name: string) => join(FIXTURES, name);

/** A module that does not parse; written at test time because it would break the typecheck as a fixture. */
export function badSyntaxExtension(): string {
  const path = join(mkdtempSync(join(tmpdir(), "pion-ext-")), "bad-syntax.ts");
  writeFileSync(path, "export default function (pi {\n");
  return path;
}

type Frame = Record<string, unknown>;

/** An ExtensionSessionPort that records every call; `nextFrame` waits for a frame instead of sleeping. */
export function fakePort(opts: { mode?: ExtensionMode; hasUI?: boolean; idle?: boolean; pending?: boolean } = {}) {
  const frames: Frame[] = [];
  const waiters: { pred: (f: Frame) => boolean; resolve: (f: Frame) => void; from: number }[] = [];
  const calls = {
    messages: [] as { msg: ExtensionMessage; opts?: SendMessageOptions }[],
    userMessages: [] as { text: string; opts?: { deliverAs?: "steer" | "followUp" } }[],
    entries: [] as { customType: string; data?: unknown }[],
    labels: [] as { entryId: string; label: string | undefined }[],
    aborts: 0,
    shutdowns: 0,
  };
  let name: string | undefined;
  const port: ExtensionSessionPort = {
    cwd: tmpdir(),
    mode: opts.mode ?? "rpc",
    hasUI: opts.hasUI ?? true,
    projectTrusted: false,
    model: () => ({ provider: "anthropic", id: "claude-test", name: "Claude Test", api: "anthropic-messages", baseUrl: "https://api.anthropic.com", reasoning: true, input: ["text"], cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 }, contextWindow: 200000, maxTokens: 64000 }),
    isIdle: () => opts.idle ?? true,
    hasPendingMessages: () => opts.pending ?? false,
    abort: () => void calls.aborts++,
    shutdown: () => void calls.shutdowns++,
    sendMessage: (msg, o) => void calls.messages.push({ msg, opts: o }),
    sendUserMessage: (text, o) => void calls.userMessages.push({ text, opts: o }),
    appendEntry: (customType, data) => void calls.entries.push({ customType, data }),
    setSessionName: (n) => void (name = n),
    getSessionName: () => name,
    setLabel: (entryId, label) => void calls.labels.push({ entryId, label }),
    writeFrame(frame) {
      frames.push(frame);
      for (const w of [...waiters]) {
        if (frames.length - 1 >= w.from && w.pred(frame)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(frame);
        }
      }
    },
  };
  /** The first frame written after this call (or already written after `from`) matching pred. */
  function nextFrame(pred: (f: Frame) => boolean = () => true, from = frames.length): Promise<Frame> {
    const found = frames.slice(from).find(pred);
    if (found) return Promise.resolve(found);
    return new Promise((resolve) => waiters.push({ pred, resolve, from }));
  }
  const entry = (customType: string) => calls.entries.filter((e) => e.customType === customType).map((e) => e.data);
  const errors = () => frames.filter((f) => f.type === "extension_error");
  return { port, frames, calls, nextFrame, entry, errors };
}
