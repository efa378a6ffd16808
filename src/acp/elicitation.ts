/**
 * Extensions' dialogs (ctx.ui.select/confirm/input/editor) as ACP form elicitations, scoped to
 * the session: each is `elicitation/create` with a one-property form. An accepted form is the
 * answer; decline, cancel, an answer that does not fit the form, or a failed request is a
 * dismissed dialog (select/input/editor → undefined, confirm → false, as ui-bridge.ts says). A
 * withdrawn dialog (its timeout passed, its signal aborted) is cancelled with `$/cancel_request`.
 */
import type * as acp from "@agentclientprotocol/sdk";
import type { DialogHost, DialogRequest } from "../extensions/ui-bridge.ts";
import { errorMessage } from "../util/errors.ts";
import { log } from "../util/log.ts";

/** The one form field every dialog's answer is read from. */
const FIELD = "value";

/** The dialogs of one session, when the editor offers form elicitation; undefined otherwise. */
export function elicitationDialogs(
  client: acp.AgentContext,
  caps: acp.ClientCapabilities | undefined,
  sessionId: () => string,
): DialogHost | undefined {
  if (!caps?.elicitation?.form) return undefined;
  return {
    async ask(req, signal) {
      // Before session/new is answered the editor knows no session to show a form in.
      const id = sessionId();
      if (!id || signal.aborted) return undefined;
      try {
        const res = await client.request(
          "elicitation/create",
          { mode: "form", sessionId: id, message: req.title, requestedSchema: { type: "object", properties: { [FIELD]: property(req) }, required: [FIELD] } },
          { cancellationSignal: signal, stopWaitingOnCancel: true },
        );
        if (res.action !== "accept") return { cancelled: true };
        return answerOf(req, (res.content as Record<string, unknown> | null | undefined)?.[FIELD]);
      } catch (err) {
        if (!signal.aborted) log("acp", `elicitation/create failed: ${errorMessage(err)}`);
        return undefined;
      }
    },
  };
}

/** The form field of a dialog. The schema cannot ask for multi-line text: editor is a plain string. */
function property(req: DialogRequest): acp.ElicitationPropertySchema {
  switch (req.method) {
    case "select":
      return { type: "string", title: req.title, enum: req.options };
    case "confirm":
      return { type: "boolean", title: req.title, ...(req.message ? { description: req.message } : {}), default: false };
    case "input":
      return { type: "string", title: req.title, ...(req.placeholder ? { description: req.placeholder } : {}) };
    case "editor":
      return { type: "string", title: req.title, ...(req.prefill !== undefined ? { default: req.prefill } : {}) };
  }
}

/** An accepted form's value as the dialog's answer; one that does not fit the form dismisses it. */
function answerOf(req: DialogRequest, value: unknown): { value?: string; confirmed?: boolean; cancelled?: boolean } {
  if (req.method === "confirm") return typeof value === "boolean" ? { confirmed: value } : { cancelled: true };
  if (typeof value !== "string") return { cancelled: true };
  if (req.method === "select" && !req.options.includes(value)) return { cancelled: true };
  return { value };
}
