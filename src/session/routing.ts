import { failedStream, laterStream } from "../providers/event-stream.ts";
import type { ModelRegistry } from "../providers/models.ts";
import { clampThinkingLevel } from "../providers/thinking.ts";
import type { AssistantMessage, LlmRequest, Message, Model, StreamFn, ThinkingLevel } from "../providers/types.ts";
import type { AgentMessage, Entry } from "../store/entries.ts";
import { errorMessage } from "../util/errors.ts";
import type { EntryInput } from "./tree.ts";

/**
 * Virtual models: a selection (api "pi-virtual") whose router picks a physical model and
 * thinking level for each request. Requests of the agent loop are routed while they are
 * built, so their events name the physical model from message_start on; any other request
 * with a virtual model (a compaction summary) is routed in the stream, as "direct". The
 * router's state is kept on the branch as a `pi.virtual-model-state` custom entry (announced
 * with entry_appended) before the request goes out. A routing failure ends the request as an
 * error message that names the virtual model. The providers only ever see physical models.
 */

export type RouteReason = "user" | "continuation" | "retry" | "direct";

/** What a router is asked, in the reference's shape. */
export interface RouteRequest {
  /** The selected virtual model and level. */
  model: Model;
  thinkingLevel: ThinkingLevel;
  reason: RouteReason;
  /** Physical model and level of the latest successful response in `messages`. */
  previous?: { model: Model; thinkingLevel?: ThinkingLevel };
  /** For "retry": the failed attempt, which `messages` no longer holds. */
  failed?: { model: Model; thinkingLevel?: ThinkingLevel; message: AssistantMessage };
  /** The state the router last returned on this branch (never for "direct"). */
  state?: unknown;
  /** The conversation for this request, the system prompt first. */
  messages: readonly (Message | { role: "system"; content: string })[];
  signal: AbortSignal;
}

/** Picks the physical model; what it returns is checked here. Throws when routing fails. */
export type ModelRouter = (request: RouteRequest) => Promise<unknown>;

export interface RoutingHost {
  router: ModelRouter;
  models: Pick<ModelRegistry, "find" | "apiKey" | "requestAuth">;
  branch(): Entry[];
  /** Commit an entry and announce it (entry_appended). */
  record(entry: EntryInput): Promise<Entry>;
}

export const ROUTE_STATE_ENTRY = "pi.virtual-model-state";

export const isVirtual = (model: { api: string }): boolean => model.api === "pi-virtual";

export class Routing {
  /** Requests whose routing failed while they were built: the stream answers with the failure. */
  private readonly failures = new WeakMap<LlmRequest, string>();

  constructor(private readonly host: RoutingHost) {}

  /**
   * A request of the agent loop for `context`: routed when its model is virtual. `failed` is the
   * attempt a retry replaces. Never throws: a failure is kept for the stream to report.
   */
  async forLoop(req: LlmRequest, context: readonly AgentMessage[], failed: AssistantMessage | undefined, signal: AbortSignal): Promise<LlmRequest> {
    if (!isVirtual(req.model)) return req;
    const lastResponse = context.findLastIndex((m) => m.role === "assistant");
    const userTurn = context.slice(lastResponse + 1).some((m) => m.role === "user");
    const reason: RouteReason = failed ? "retry" : userTurn ? "user" : "continuation";
    try {
      return await this.route(req, reason, failed, signal);
    } catch (err) {
      this.failures.set(req, errorMessage(err));
      return req;
    }
  }

  /** Wraps the session's stream: reports failures of routing, routes what is still virtual. */
  stream(inner: StreamFn): StreamFn {
    return (req, signal) => {
      const failure = this.failures.get(req);
      if (failure !== undefined) return failedStream(req, failure);
      if (!isVirtual(req.model)) return inner(req, signal);
      return laterStream(
        req,
        this.route(req, "direct", undefined, signal).then((routed) => inner(routed, signal)),
        errorMessage,
      );
    };
  }

  private async route(req: LlmRequest, reason: RouteReason, failed: AssistantMessage | undefined, signal: AbortSignal): Promise<LlmRequest> {
    const virtual = req.model;
    const name = `Virtual model ${virtual.provider}/${virtual.id}`;
    const state = reason === "direct" ? undefined : this.state(virtual);
    const latest = req.messages.findLast((m): m is AssistantMessage => m.role === "assistant" && m.stopReason !== "error" && m.stopReason !== "aborted");
    const previous = latest && this.physical(latest.provider, latest.model);
    const failedModel = failed && this.physical(failed.provider, failed.model);
    const answer = await this.host.router({
      model: virtual,
      thinkingLevel: req.thinkingLevel,
      reason,
      ...(previous ? { previous: { model: previous, thinkingLevel: latest!.thinkingLevel } } : {}),
      ...(failed && failedModel ? { failed: { model: failedModel, thinkingLevel: failed.thinkingLevel, message: failed } } : {}),
      ...(state !== undefined ? { state } : {}),
      messages: [{ role: "system", content: req.systemPrompt }, ...req.messages],
      signal,
    });
    const route = (answer ?? {}) as { model?: { provider?: unknown; id?: unknown }; thinkingLevel?: unknown; state?: unknown };
    const target = route.model;
    if (!target || typeof target.provider !== "string" || typeof target.id !== "string") throw new Error(`${name} returned no model to route to.`);
    const routed = `${name} routed to ${target.provider}/${target.id}`;
    const model = this.physical(target.provider, target.id);
    if (!model) throw new Error(`${routed}, which is not a physical model.`);
    if (this.host.models.apiKey(model.provider) === undefined) throw new Error(`${routed}, which has no credentials.`);
    const auth = await this.host.models.requestAuth(model.provider, signal);
    if (reason !== "direct" && route.state !== undefined && route.state !== state) {
      // Stored before the request goes out, and kept if it then fails.
      await this.host.record({ type: "custom", customType: ROUTE_STATE_ENTRY, data: { provider: virtual.provider, modelId: virtual.id, state: route.state } });
    }
    const level = typeof route.thinkingLevel === "string" ? (route.thinkingLevel as ThinkingLevel) : req.thinkingLevel;
    const { authHeaders: _, ...rest } = req;
    return { ...rest, model, apiKey: auth.apiKey, ...(auth.headers ? { authHeaders: auth.headers } : {}), thinkingLevel: clampThinkingLevel(model, level) };
  }

  /** The router state last stored on the branch for this virtual model. */
  private state(virtual: Model): unknown {
    const branch = this.host.branch();
    for (let i = branch.length - 1; i >= 0; i--) {
      const e = branch[i]!;
      if (e.type !== "custom" || e.customType !== ROUTE_STATE_ENTRY) continue;
      const d = e.data as { provider?: unknown; modelId?: unknown; state?: unknown } | undefined;
      if (d?.provider === virtual.provider && d.modelId === virtual.id) return d.state;
    }
    return undefined;
  }

  private physical(provider: string, id: string): Model | undefined {
    const m = this.host.models.find(provider, id);
    return m && !isVirtual(m) ? m : undefined;
  }
}
