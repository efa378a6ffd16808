/**
 * pion's answers to the reference's built-in commands (resources/builtin-commands.ts says which
 * are on): a prompt `/mcp …` or `/llama …` is handled here, never sent to the model. What they
 * say goes to the client as `extension_ui_request` notify frames where there is a client to see
 * them (RPC); in JSON and print mode the command is handled without a word, as the reference's.
 * An extension's own command of the same name comes first (the caller asks it before these).
 */
import type { BuiltinCommandInfo, BuiltinCommandName, BuiltinCommandSet } from "../resources/builtin-commands.ts";
import { replacesBuiltin } from "../resources/builtin-commands.ts";
import type { McpCommandHost, Notify } from "../mcp/status-command.ts";

export interface BuiltinCommands {
  /** Listed before and after the extensions' own commands (those an extension replaced left out). */
  listed(): { first: BuiltinCommandInfo[]; last: BuiltinCommandInfo[] };
  /** Runs `text` when it invokes a listed built-in command; false when it does not. */
  run(text: string): Promise<boolean> | false;
}

export interface BuiltinCommandDeps {
  set: BuiltinCommandSet;
  /** Whether a client sees notifications (RPC mode). */
  hasUI: boolean;
  /** The names of the extensions' own commands, now. */
  extensionCommands: () => readonly string[];
  mcp: () => McpCommandHost;
  write: (frame: Record<string, unknown>) => void;
}

export function createBuiltinCommands(d: BuiltinCommandDeps): BuiltinCommands {
  const kept = (list: BuiltinCommandInfo[]) => {
    const own = d.extensionCommands();
    return list.filter((b) => !own.some((name) => replacesBuiltin(name, b.name)));
  };
  const listed = () => ({ first: kept(d.set.first), last: kept(d.set.last) });
  let notify: Notify | undefined;
  const say = async (): Promise<Notify> => {
    if (!d.hasUI) return () => {};
    // The extensions' UI bridge makes the frames; it loads with the first built-in command.
    if (!notify) {
      const { UiBridge } = await import("../extensions/ui-bridge.ts");
      const { ui } = new UiBridge(true, d.write);
      notify = (message, level) => ui.notify(message, level);
    }
    return notify;
  };
  const handlers: Record<BuiltinCommandName, (args: string) => Promise<void>> = {
    llama: async () => (await say())("/llama works only in an interactive terminal. Here, choose a llama.cpp model with set_model (provider \"llama.cpp\").", "warning"),
    mcp: async (args) => {
      const { runMcpCommand } = await import("../mcp/status-command.ts");
      await runMcpCommand(args, d.mcp(), await say());
    },
  };
  return {
    listed,
    run(text) {
      if (!text.startsWith("/")) return false;
      const match = /^\/(\S+)(?:\s+([\s\S]*))?$/.exec(text);
      const name = match?.[1];
      const { first, last } = listed();
      const command = [...first, ...last].find((b) => b.name === name);
      if (!command) return false;
      return handlers[command.name](match?.[2] ?? "").then(() => true);
    },
  };
}
