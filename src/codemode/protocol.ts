/** The messages between a codemode script's worker (worker.ts) and pion (runner.ts). Types only. */

export interface RunMessage {
  type: "run";
  code: string;
  /** The branch's `store()` values. */
  store: Record<string, unknown>;
  allTools: { name: string; description: string }[];
  memoryBytes: number;
}

/** The answer to one of the script's calls: a JSON text, or an error message. */
export type ReplyMessage = { type: "reply"; id: number; ok: true; json: string | undefined } | { type: "reply"; id: number; ok: false; error: string };

export interface CallMessage {
  type: "call";
  id: number;
  method: "tool" | "searchTools" | "describeTool" | "describeNamespace";
  payload: unknown;
}

export type OutputItem = { kind: "text"; text: string } | { kind: "image"; value: unknown };

export interface DoneMessage {
  type: "done";
  ok: boolean;
  error?: string;
  items: OutputItem[];
  console: string[];
  /** `store()` writes of the script; `null` deletes. */
  writes: Record<string, unknown>;
}

export type FromWorker = CallMessage | DoneMessage;
export type ToWorker = RunMessage | ReplyMessage;
