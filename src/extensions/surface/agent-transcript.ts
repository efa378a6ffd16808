/**
 * What pi-agent-core adds to pi-ai's transcript helpers (session/system-messages.ts), where system
 * messages carry the prompt and the tool declarations: the loop announces a change of the
 * executable tools with a system message, and, since pion's providers take one system prompt and
 * one tool list, a request is built from the replayed transcript.
 */
import type { Message } from "../../providers/types.ts";
import { getCurrentSystemPrompt, getCurrentTools, getToolStateChanges, toToolDeclaration } from "../../session/system-messages.ts";

type AnyMessage = { role: string };
type Declarable = Parameters<typeof toToolDeclaration>[0];
type ToolDeclaration = ReturnType<typeof toToolDeclaration>;
type Changes = ReturnType<typeof getToolStateChanges>;

/** `message` with its tool fields replaced by `changes` (an empty list leaves its field out). */
function withChanges<M>(message: M, { toolsAdded, toolsRemoved }: Changes): M {
  const { toolsAdded: _a, toolsRemoved: _r, ...rest } = message as M & Partial<Changes>;
  return { ...rest, ...(toolsAdded.length > 0 ? { toolsAdded } : {}), ...(toolsRemoved.length > 0 ? { toolsRemoved } : {}) } as M;
}

const NONE: Changes = { toolsAdded: [], toolsRemoved: [] };

/**
 * `pending` with the difference between the tools the transcript declares and `tools` (what can
 * run) written on a system message: on the last pending system message if there is one, else on
 * a new one placed before the first pending message that is not a system message.
 */
export function declareToolChanges<M extends AnyMessage>(context: readonly AnyMessage[], tools: readonly object[], pending: M[]): M[] {
  let at = -1;
  for (let i = pending.length - 1; i >= 0; i--) if (pending[i]!.role === "system") { at = i; break; }
  const own = at >= 0 ? (pending[at] as M & Partial<Changes>) : undefined;
  const baseline = own ? pending.map((m, i) => (i === at ? withChanges(own, NONE) : m)) : pending;
  const changes = getToolStateChanges(getCurrentTools([...context, ...baseline]), tools.map((t) => toToolDeclaration(t as Declarable)));
  const unchanged = changes.toolsAdded.length === 0 && changes.toolsRemoved.length === 0;
  if (own) {
    if (unchanged && !own.toolsAdded?.length && !own.toolsRemoved?.length) return pending;
    return baseline.map((m, i) => (i === at ? withChanges(own, changes) : m));
  }
  if (unchanged) return pending;
  const update = withChanges({ role: "system", content: "", timestamp: Date.now() } as unknown as M, changes);
  const first = pending.findIndex((m) => m.role !== "system");
  const index = first === -1 ? pending.length : first;
  return [...pending.slice(0, index), update, ...pending.slice(index)];
}

/** A transcript as pion's providers take it: one system prompt, the declared tools, the other messages. */
export function requestParts(messages: readonly AnyMessage[]): { systemPrompt: string; tools: ToolDeclaration[]; messages: Message[] } {
  return { systemPrompt: getCurrentSystemPrompt(messages), tools: getCurrentTools(messages), messages: messages.filter((m) => m.role !== "system") as Message[] };
}
