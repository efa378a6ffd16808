/**
 * ctx.ui for headless modes. In rpc mode dialogs become `extension_ui_request` frames
 * answered by `extension_ui_response` (matched by id); fire-and-forget calls are frames
 * with no answer. With a DialogHost (ACP: elicitation) dialogs go to it instead and
 * fire-and-forget calls are dropped. Without a UI (json/print) every call is a no-op
 * returning its default.
 * TUI-only methods are degraded as the spec's RPC section lists.
 */
import { uuid } from "../util/id.ts";
import { TUI_UI_STAND_INS } from "./tui-stand-ins.ts";

export interface DialogOptions {
  /** Milliseconds; when it passes the dialog resolves to its default. */
  timeout?: number;
  signal?: AbortSignal;
}

export interface UiResponse {
  id: string;
  value?: string;
  confirmed?: boolean;
  cancelled?: boolean;
}

type Method = "select" | "confirm" | "input" | "editor";

/** One dialog as a host sees it: the `extension_ui_request` fields without the frame's own. */
export type DialogRequest =
  | { method: "select"; title: string; options: string[] }
  | { method: "confirm"; title: string; message: string }
  | { method: "input"; title: string; placeholder?: string }
  | { method: "editor"; title: string; prefill?: string };

/**
 * Where dialogs go when they are not frames. `ask` resolves to the answer (the fields of an
 * `extension_ui_response`), or undefined when the user dismissed it or it could not be asked;
 * `signal` aborts when the dialog is withdrawn (timeout, the caller's signal) and its answer
 * no longer matters.
 */
export interface DialogHost {
  ask(req: DialogRequest, signal: AbortSignal): Promise<Omit<UiResponse, "id"> | undefined>;
}


const identity = (text: string) => text;

/** Enough of a theme for render helpers that style text; styling is dropped headlessly. */
const plainTheme = {
  fg: (_color: string, text: string) => text,
  bg: (_color: string, text: string) => text,
  bold: identity,
  italic: identity,
  underline: identity,
  strikethrough: identity,
  inverse: identity,
  dim: identity,
};

/** One instance per runner: it owns the pending dialogs. */
export class UiBridge {
  private pending = new Map<string, { settle: (r: UiResponse | undefined) => void }>();

  constructor(
    private readonly hasUI: boolean,
    private readonly write: (frame: Record<string, unknown>) => void,
    private readonly host?: DialogHost,
  ) {}

  /** Resolve the dialog with this id; unknown ids (answered, timed out, never sent) are ignored. */
  respond(frame: UiResponse): void {
    this.pending.get(frame.id)?.settle(frame);
  }

  /** The `ctx.ui` object handed to extensions. */
  readonly ui = {
    select: async (title: string, options: string[], opts?: DialogOptions): Promise<string | undefined> => {
      const r = await this.dialog("select", { title, options }, opts);
      return r && !r.cancelled && typeof r.value === "string" ? r.value : undefined;
    },
    confirm: async (title: string, message: string, opts?: DialogOptions): Promise<boolean> => {
      const r = await this.dialog("confirm", { title, message }, opts);
      return r !== undefined && !r.cancelled && r.confirmed === true;
    },
    input: async (title: string, placeholder?: string, opts?: DialogOptions): Promise<string | undefined> => {
      const r = await this.dialog("input", { title, placeholder }, opts);
      return r && !r.cancelled && typeof r.value === "string" ? r.value : undefined;
    },
    editor: async (title: string, prefill?: string, opts?: DialogOptions): Promise<string | undefined> => {
      const r = await this.dialog("editor", { title, prefill }, opts);
      return r && !r.cancelled && typeof r.value === "string" ? r.value : undefined;
    },
    notify: (message: string, type?: "info" | "warning" | "error"): void => {
      this.fire("notify", { message, notifyType: type });
    },
    setStatus: (key: string, text?: string): void => {
      this.fire("setStatus", { statusKey: key, statusText: text });
    },
    setWidget: (key: string, content?: unknown, options?: { placement?: "aboveEditor" | "belowEditor" }): void => {
      // Component factories need a terminal; only string arrays (or a clear) go over the wire.
      if (content !== undefined && !isStringArray(content)) return;
      this.fire("setWidget", { widgetKey: key, widgetLines: content, widgetPlacement: options?.placement });
    },
    setTitle: (title: string): void => {
      this.fire("setTitle", { title });
    },
    setEditorText: (text: string): void => {
      this.fire("set_editor_text", { text });
    },
    pasteToEditor: (text: string): void => {
      this.fire("set_editor_text", { text });
    },
    ...TUI_UI_STAND_INS,
    setTheme: (_theme?: unknown): { success: false; error: string } => ({ success: false, error: "Theme switching not supported in RPC mode" }),
    theme: plainTheme,
  };

  private dialog(method: Method, fields: Record<string, unknown>, opts: DialogOptions | undefined): Promise<UiResponse | undefined> {
    if ((!this.hasUI && !this.host) || opts?.signal?.aborted) return Promise.resolve(undefined);
    const id = uuid();
    const withdrawn = new AbortController();
    return new Promise((resolve) => {
      const timer = opts?.timeout !== undefined ? setTimeout(() => settle(undefined), opts.timeout) : undefined;
      const onAbort = () => settle(undefined);
      const settle = (r: UiResponse | undefined) => {
        if (!this.pending.delete(id)) return;
        if (timer) clearTimeout(timer);
        opts?.signal?.removeEventListener("abort", onAbort);
        withdrawn.abort();
        resolve(r);
      };
      this.pending.set(id, { settle });
      opts?.signal?.addEventListener("abort", onAbort, { once: true });
      if (this.host) {
        const req = compact({ method, ...fields }) as DialogRequest;
        this.host.ask(req, withdrawn.signal).then(
          (r) => settle(r && { ...r, id }),
          () => settle(undefined),
        );
      } else this.write(compact({ type: "extension_ui_request", id, method, ...fields, timeout: opts?.timeout }));
    });
  }

  private fire(method: string, fields: Record<string, unknown>): void {
    if (!this.hasUI || this.host) return;
    this.write(compact({ type: "extension_ui_request", id: uuid(), method, ...fields }));
  }
}

export type ExtensionUi = UiBridge["ui"];

function isStringArray(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((x) => typeof x === "string");
}

/** Drop undefined fields so a frame's keys are exactly the ones that carry a value. */
function compact(frame: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(frame).filter(([, v]) => v !== undefined));
}
