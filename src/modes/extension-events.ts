/**
 * The session's events as extensions see them, after they are written: the agent's own events
 * under their names, and the reference's names for the rest: `model_select`, `thinking_level_select`, `session_info_changed`, `session_before_compact` /
 * `session_compact` (a compaction's start and its result). One event's handlers finish before
 * the next event reaches extensions (a `message_end` or `turn_end` handler is awaited, as in the
 * reference); the session itself does not wait for them.
 */
import { hookedFetch } from "../extensions/provider-fetch.ts";
import type { ExtensionRunner } from "../extensions/types.ts";
import type { StreamFn } from "../providers/types.ts";
import type { Settings } from "../config.ts";
import { resolve } from "node:path";
import type { SessionEvent } from "../session/session-types.ts";

const NOTIFIED: ReadonlySet<string> = new Set([
  "agent_start",
  "agent_end",
  "turn_start",
  "turn_end",
  "message_start",
  "message_update",
  "message_end",
  "tool_execution_start",
  "tool_execution_update",
  "tool_execution_end",
]);

type Payload = Record<string, unknown>;

/** The reference's event name and payload for one session event, if extensions hear of it. */
export function extensionEvent(e: SessionEvent, state: { model?: Payload; level?: string }): [string, Payload] | undefined {
  const r = e as unknown as Payload & { type: string };
  if (NOTIFIED.has(r.type)) return [r.type, r];
  switch (r.type) {
    case "session_info_changed":
      return ["session_info_changed", { name: r.name }];
    case "thinking_level_changed": {
      const previousLevel = state.level;
      state.level = r.level as string;
      return ["thinking_level_select", { level: r.level, previousLevel }];
    }
    case "compaction_start":
      return ["session_before_compact", { reason: r.reason }];
    case "compaction_end":
      return r.result ? ["session_compact", { reason: r.reason, compactionEntry: r.result, fromExtension: false }] : undefined;
    default:
      return undefined;
  }
}

/**
 * Forward the session's events to the extensions, in order. The session announces no model
 * change on the wire, so `model_select` is sent when the next event finds `model()` changed (at
 * once when the change clamps the thinking level, else before the next prompt's events).
 */
export function forwardEvents(
  extensions: ExtensionRunner,
  subscribe: (fn: (e: SessionEvent) => void | Promise<void>) => void,
  model: () => { provider: string; id: string } | undefined,
  level: string,
): void {
  const state: { model?: Payload; level?: string } = { model: model(), level };
  let tail: Promise<void> = Promise.resolve();
  const send = (name: string, payload: Payload) => {
    tail = tail.then(() => extensions.notify(name, payload));
  };
  const modelChange = () => {
    const now = model();
    if (!now || (now.provider === state.model?.provider && now.id === state.model?.id)) return;
    send("model_select", { model: now, previousModel: state.model, source: "set" });
    state.model = { ...now };
  };
  subscribe((e) => {
    // A model change that clamps the thinking level: thinking_level_select, then model_select (the reference's order).
    if (e.type !== "thinking_level_changed") modelChange();
    const event = extensionEvent(e, state);
    if (event) send(event[0], event[1]);
    if (e.type === "thinking_level_changed") modelChange();
  });
}

/**
 * The provider hooks around each model request's HTTP call, when an extension handles them:
 * `before_provider_headers` (handlers change `headers` in place; null deletes one),
 * `before_provider_request` (a handler's return value replaces the JSON payload), and
 * `after_provider_response` (status and headers, before the stream is read).
 */
export function withProviderHooks(stream: StreamFn, extensions: ExtensionRunner): StreamFn {
  const hooked = ["before_provider_headers", "before_provider_request", "after_provider_response"];
  const fetch = hookedFetch({
    headers: async (headers) => {
      if (extensions.handles("before_provider_headers")) await extensions.notify("before_provider_headers", { headers });
    },
    wantsPayload: () => extensions.handles("before_provider_request"),
    payload: (payload) => extensions.onProviderRequest(payload),
    response: async (response) => {
      if (extensions.handles("after_provider_response")) await extensions.notify("after_provider_response", response);
    },
  });
  return (req, signal) => (hooked.some((e) => extensions.handles(e)) ? stream({ ...req, fetch }, signal) : stream(req, signal));
}

/**
 * `resources_discover` ({cwd, reason}): the skill and prompt paths handlers return (relative ones
 * from the cwd) join the settings' `skills` and `prompts` lists. Fired after `session_start`, as
 * the reference does; the session's resources are then loaded again with them.
 */
export async function withDiscoveredResources(settings: Settings, extensions: ExtensionRunner, cwd: string, reason: "startup" | "reload"): Promise<Settings> {
  if (!extensions.handles("resources_discover") || !settings.listedResources) return settings;
  const found = await extensions.onResourcesDiscover({ cwd, reason });
  const entries = (paths: string[]) => paths.map((p) => ({ entry: resolve(cwd, p), base: cwd, level: "user" as const }));
  const lists = settings.listedResources;
  return { ...settings, listedResources: { ...lists, skills: [...lists.skills, ...entries(found.skillPaths)], prompts: [...lists.prompts, ...entries(found.promptPaths)] } };
}
