/**
 * File access for one ACP session's read, write and edit tools: through the editor when it
 * offers `fs/read_text_file` / `fs/write_text_file` (so unsaved buffers are seen and edits land
 * in them), else the disk. Writes of a call the session expects (an edit or write that started)
 * are recorded as a diff for its `tool_call_update`.
 */
import type * as acp from "@agentclientprotocol/sdk";
import { diskTextOps, type TextFileOps } from "../tools/file-ops.ts";

export interface FileDiff {
  path: string;
  oldText: string | null;
  newText: string;
}

export function clientTextOps(client: acp.AgentContext, caps: acp.FileSystemCapabilities | undefined, sessionId: () => string): TextFileOps {
  return {
    readText: caps?.readTextFile
      ? async (path) => (await client.request("fs/read_text_file", { sessionId: sessionId(), path })).content
      : diskTextOps.readText,
    writeText: caps?.writeTextFile
      ? async (path, content) => void (await client.request("fs/write_text_file", { sessionId: sessionId(), path, content }))
      : diskTextOps.writeText,
  };
}

export class RecordingFiles implements TextFileOps {
  private readonly expected = new Map<string, string>();
  private readonly diffs = new Map<string, FileDiff>();
  private readonly lastRead = new Map<string, string>();

  constructor(private readonly inner: TextFileOps) {}

  /** The call `callId` is about to change `path`. */
  expect(callId: string, path: string): void {
    this.expected.set(callId, path);
  }

  /** The diff the call made, if it wrote its file. */
  take(callId: string): FileDiff | undefined {
    const path = this.expected.get(callId);
    this.expected.delete(callId);
    const d = this.diffs.get(callId);
    this.diffs.delete(callId);
    if (path && ![...this.expected.values()].includes(path)) this.lastRead.delete(path);
    return d;
  }

  async readText(path: string): Promise<string> {
    const text = await this.inner.readText(path);
    if ([...this.expected.values()].includes(path)) this.lastRead.set(path, text);
    return text;
  }

  async writeText(path: string, content: string): Promise<void> {
    const callId = [...this.expected].find(([id, p]) => p === path && !this.diffs.has(id))?.[0];
    let oldText: string | null = null;
    if (callId) {
      oldText = this.lastRead.get(path) ?? null;
      if (oldText === null) oldText = await this.inner.readText(path).catch(() => null);
    }
    await this.inner.writeText(path, content);
    if (callId) this.diffs.set(callId, { path, oldText, newText: content });
    this.lastRead.set(path, content);
  }
}
