/**
 * The reference's `RpcClient` over pion's typed RPC client (src/client/index.ts): it starts pion
 * itself in RPC mode (this binary, or from source `bun src/cli.ts`; `cliPath` names another
 * script or binary), sends each command and answers with the reference's part of the response
 * data. The client module loads on `start()`, not when an extension is loaded.
 */
import { join } from "node:path";
import type { PionClient } from "../../client/index.ts";
import type { RequestType } from "../../protocol/results.ts";
import { isCompiledBinary } from "../disk-modules.ts";

export interface RpcClientOptions {
  /** A pion binary, or a script Bun runs. Default: the running pion. */
  cliPath?: string;
  cwd?: string;
  env?: Record<string, string>;
  provider?: string;
  model?: string;
  args?: string[];
}

type Event = { type: string } & Record<string, unknown>;
type Data = Record<string, unknown>;

function pionCommand(cliPath?: string): string[] {
  if (cliPath) return /\.[cm]?[jt]s$/.test(cliPath) ? [isCompiledBinary() ? "bun" : process.execPath, cliPath] : [cliPath];
  return isCompiledBinary() ? [process.execPath] : [process.execPath, join(import.meta.dir, "../../cli.ts")];
}

export class RpcClient {
  readonly #options: RpcClientOptions;
  #client: PionClient | undefined;
  #exitCode: number | undefined;
  readonly #listeners = new Set<(event: Event) => void>();

  constructor(options: RpcClientOptions = {}) {
    this.#options = options;
  }

  /** Start pion in RPC mode; rejects when it exits at once (a bad flag, say), with its stderr. */
  async start(): Promise<void> {
    if (this.#client) throw new Error("Client already started");
    const { PionClient } = require("../../client/index.ts") as typeof import("../../client/index.ts");
    const { EVENT_SCHEMAS } = require("../../protocol/events.ts") as typeof import("../../protocol/events.ts");
    const o = this.#options;
    const args = [...(o.provider ? ["--provider", o.provider] : []), ...(o.model ? ["--model", o.model] : []), ...(o.args ?? [])];
    const client = PionClient.spawn({ command: pionCommand(o.cliPath), args, cwd: o.cwd, env: o.env });
    this.#client = client;
    this.#exitCode = undefined;
    void client.exited.then((code) => (this.#exitCode = code));
    for (const type of Object.keys(EVENT_SCHEMAS) as (keyof typeof EVENT_SCHEMAS)[]) client.on(type, (e) => this.#emit(e as unknown as Event));
    await Bun.sleep(100);
    if (this.#exitCode !== undefined) throw new Error(`Agent process exited with code ${this.#exitCode}. Stderr: ${client.stderr}`);
  }

  /** Terminate pion (SIGTERM, then SIGKILL after a second). */
  async stop(): Promise<void> {
    const client = this.#client;
    if (!client) return;
    this.#client = undefined;
    if (this.#exitCode !== undefined) return;
    const kill = (signal: NodeJS.Signals) => {
      try {
        process.kill(client.pid, signal);
      } catch {
        // already gone
      }
    };
    kill("SIGTERM");
    const timer = setTimeout(() => kill("SIGKILL"), 1000);
    await client.exited;
    clearTimeout(timer);
  }

  onEvent(listener: (event: Event) => void): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  getStderr(): string {
    return this.#client?.stderr ?? "";
  }

  #emit(event: Event): void {
    for (const l of [...this.#listeners]) l(event);
  }

  async #send(type: RequestType, params: Data = {}): Promise<Data> {
    if (!this.#client) throw new Error("Client not started");
    return ((await this.#client.request(type, params as never)) ?? {}) as Data;
  }

  prompt = async (message: string, images?: unknown[], streamingBehavior?: "steer" | "followUp") => (await this.#send("prompt", { message, images, streamingBehavior })).disposition;
  steer = async (message: string, images?: unknown[]) => (await this.#send("steer", { message, images })).disposition;
  followUp = async (message: string, images?: unknown[]) => (await this.#send("follow_up", { message, images })).disposition;
  abort = async () => void (await this.#send("abort"));
  clearQueue = () => this.#send("clear_queue");
  newSession = (parentSession?: string) => this.#send("new_session", { parentSession });
  getState = () => this.#send("get_state");
  setModel = (provider: string, modelId: string) => this.#send("set_model", { provider, modelId });
  cycleModel = () => this.#send("cycle_model");
  getAvailableModels = async () => (await this.#send("get_available_models")).models;
  setThinkingLevel = async (level: string) => void (await this.#send("set_thinking_level", { level }));
  cycleThinkingLevel = () => this.#send("cycle_thinking_level");
  getAvailableThinkingLevels = async () => (await this.#send("get_available_thinking_levels")).levels;
  setSteeringMode = async (mode: string) => void (await this.#send("set_steering_mode", { mode }));
  setFollowUpMode = async (mode: string) => void (await this.#send("set_follow_up_mode", { mode }));
  compact = (customInstructions?: string) => this.#send("compact", { customInstructions });
  setAutoCompaction = async (enabled: boolean) => void (await this.#send("set_auto_compaction", { enabled }));
  setAutoRetry = async (enabled: boolean) => void (await this.#send("set_auto_retry", { enabled }));
  abortRetry = async () => void (await this.#send("abort_retry"));
  bash = (command: string) => this.#send("bash", { command });
  abortBash = async () => void (await this.#send("abort_bash"));
  getSessionStats = () => this.#send("get_session_stats");
  exportHtml = (outputPath?: string) => this.#send("export_html", { outputPath });
  switchSession = (sessionPath: string) => this.#send("switch_session", { sessionPath });
  fork = (entryId: string) => this.#send("fork", { entryId });
  clone = () => this.#send("clone");
  getForkMessages = async () => (await this.#send("get_fork_messages")).messages;
  getEntries = (since?: string) => this.#send("get_entries", { since });
  getTree = () => this.#send("get_tree");
  getLastAssistantText = async () => (await this.#send("get_last_assistant_text")).text;
  setSessionName = async (name: string) => void (await this.#send("set_session_name", { name }));
  getMessages = async () => (await this.#send("get_messages")).messages;
  getCommands = async () => (await this.#send("get_commands")).commands;

  /** Resolves at the next `agent_settled` (the run and its follow-ups are over). */
  waitForIdle(timeout = 60_000): Promise<void> {
    return this.collectEvents(timeout).then(() => undefined);
  }

  /** Every event up to and including the next `agent_settled`. */
  collectEvents(timeout = 60_000): Promise<Event[]> {
    return new Promise((resolve, reject) => {
      const events: Event[] = [];
      const timer = setTimeout(() => {
        off();
        reject(new Error(`Timed out after ${timeout} ms waiting for the agent to settle. Stderr: ${this.getStderr()}`));
      }, timeout);
      const off = this.onEvent((event) => {
        events.push(event);
        if (event.type !== "agent_settled") return;
        clearTimeout(timer);
        off();
        resolve(events);
      });
    });
  }

  async promptAndWait(message: string, images?: unknown[], timeout = 60_000): Promise<Event[]> {
    const events = this.collectEvents(timeout);
    await this.prompt(message, images);
    return events;
  }
}
