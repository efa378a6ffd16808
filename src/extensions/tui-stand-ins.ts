/**
 * Every inert stand-in pion gives extensions, in one place. They stand for the reference's
 * terminal UI, which headless pion does not have: no component is ever drawn, no key is ever
 * pressed, no renderer is ever called. An extension may construct, register or call them
 * (many do at load time) and simply gets nothing back. Anything that is not terminal UI does
 * what its name says (text-helpers.ts, ui-bridge.ts) or throws a clear error.
 */

import { headless, headlessClass } from "./surface/export-surface.ts";

function noop(..._args: unknown[]): void {}

const standInClass = headlessClass;

/** `Key.enter`, `Key.ctrl("x")`, `Key.ctrlShift("u")`...: any name works, as a value or a builder. */
const anyKey = headless(new Proxy(
  {},
  {
    get: (_target, name) =>
      typeof name === "string" ? Object.assign((...parts: unknown[]) => [name, ...parts].join("+"), { toString: () => name }) : undefined,
  },
));

/** Exports of the reference's packages (virtual-modules.ts), by package. */
export const TUI_MODULE_STAND_INS: Record<"tui" | "codingAgent", Record<string, unknown>> = {
  tui: {
    Key: anyKey,
    matchesKey: headless(() => false),
    parseKey: headless(() => undefined),
    isKeyRelease: headless(() => false),
    CURSOR_MARKER: "",
    renderFakeCursor: headless(() => ""),
    ...Object.fromEntries(
      ["Text", "Box", "Container", "Spacer", "Markdown", "Editor", "Input", "SelectList", "SettingsList"].map((n) => [n, standInClass(n)]),
    ),
  },
  codingAgent: {
    getMarkdownTheme: headless(() => ({})),
    getSettingsListTheme: headless(() => ({})),
    getSelectListTheme: headless(() => ({})),
    // Key hints as plain text: the binding's name (or the raw key) and the description.
    keyText: headless((binding: string) => String(binding)),
    keyHint: headless((binding: string, description: string) => `${binding} ${description}`),
    rawKeyHint: headless((key: string, description: string) => `${key} ${description}`),
    CustomEditor: standInClass("CustomEditor"),
    DynamicBorder: standInClass("DynamicBorder"),
    BorderedLoader: standInClass("BorderedLoader"),
  },
};

/** `pi.register*` calls for renderers and shortcuts (api.ts): accepted, never called. */
export const TUI_API_STAND_INS = {
  registerShortcut: noop,
  registerMessageRenderer: noop,
  registerEntryRenderer: noop,
  registerToolRenderer: noop,
  registerMarkdownTransformer: noop,
};

/** `ctx.ui` methods with no wire form (ui-bridge.ts): the editor, footer, themes, custom components. */
export const TUI_UI_STAND_INS = {
  getEditorText: (): string => "",
  custom: async (..._args: unknown[]): Promise<undefined> => undefined,
  onTerminalInput: (..._args: unknown[]): (() => void) => () => {},
  setWorkingMessage: noop,
  setWorkingVisible: noop,
  setWorkingIndicator: noop,
  setHiddenThinkingLabel: noop,
  setFooter: noop,
  setHeader: noop,
  addAutocompleteProvider: noop,
  setEditorComponent: noop,
  getEditorComponent: (): undefined => undefined,
  getToolsExpanded: (): boolean => false,
  setToolsExpanded: noop,
  getAllThemes: (): unknown[] => [],
  getTheme: (): undefined => undefined,
};
