import { finalizeArgs, parseArgs, UsageError, type ExtraFlag, type ParsedArgs } from "../cli/args.ts";
import { isOffline, pionHome, sessionDirFromEnv, TARGET, VERSION } from "../config.ts";
import type { InlineExtension } from "../extensions/types.ts";
import type { CliOptions } from "./compose.ts";
import { errorMessage } from "../util/errors.ts";
import { writeErr, writeOut } from "../util/stdio.ts";

const usageError = (err: unknown): number => {
  writeErr(`pion: ${errorMessage(err)} (see pion --help)\n`);
  return 2;
};

/** What the positionals may be in `mode`: prompts in json/print mode, nothing in RPC mode. */
function checkPositionals(mode: string, positionals: string[]): void {
  if (mode !== "rpc") return;
  if (positionals.some((p) => p.startsWith("@"))) {
    throw new UsageError("@file arguments are not supported in RPC mode; send files in prompt commands instead");
  }
  if (positionals.length > 0) throw new UsageError("RPC mode takes no prompt arguments; send prompt commands on stdin");
}

/** `pion sessions ...`: its own small flag set. */
async function runSessions(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  const args: string[] = [];
  const opts: { json: boolean; limit?: number; filterCwd?: string; sessionDir?: string } = { json: false };
  for (let i = 0; i < rest.length; i++) {
    const tok = rest[i]!;
    if (tok === "--json") opts.json = true;
    else if (tok === "--limit" || tok === "--cwd" || tok === "--session-dir") {
      const val = rest[++i];
      if (val === undefined) {
        writeErr(`pion: Option ${tok} needs a value\n`);
        return 2;
      }
      if (tok === "--limit") opts.limit = Number(val);
      else if (tok === "--cwd") opts.filterCwd = val;
      else opts.sessionDir = val;
    } else if (tok.startsWith("-")) {
      writeErr(`pion: Unknown option: ${tok}\n`);
      return 2;
    } else args.push(tok);
  }
  const { runSessionsCli } = await import("./sessions-cli.ts");
  try {
    const { withSettingsSessionDir } = await import("./session-dir.ts");
    const where = withSettingsSessionDir({ home: pionHome(), cwd: process.cwd(), env: process.env, sessionDir: opts.sessionDir ?? sessionDirFromEnv(process.env) });
    return runSessionsCli(sub, args, { ...where, ...opts, sessionDir: where.sessionDir });
  } catch (err) {
    writeErr(`pion: ${errorMessage(err)}\n`);
    return 1;
  }
}

/** `pion models [list|refresh] ...`: its own small flag set. */
async function runModels(argv: string[]): Promise<number> {
  const sub = argv[0] && !argv[0].startsWith("-") ? argv[0] : undefined;
  const rest = sub ? argv.slice(1) : argv;
  const opts: { json: boolean; provider?: string; search?: string; url?: string; timeoutSeconds?: number } = { json: false };
  for (let i = 0; i < rest.length; i++) {
    const tok = rest[i]!;
    if (tok === "--json") opts.json = true;
    else if (tok === "--provider" || tok === "--search" || tok === "--url" || tok === "--timeout") {
      const val = rest[++i];
      if (val === undefined) {
        writeErr(`pion: Option ${tok} needs a value\n`);
        return 2;
      }
      if (tok === "--timeout") {
        opts.timeoutSeconds = Number(val);
        if (!(opts.timeoutSeconds > 0)) {
          writeErr(`pion: Option --timeout needs a number of seconds above 0\n`);
          return 2;
        }
      } else opts[tok.slice(2) as "provider" | "search" | "url"] = val;
    } else {
      writeErr(`pion: Unknown option for pion models: ${tok} (usage: pion models [--provider P] [--search TEXT] [--json] | pion models refresh [--url URL] [--timeout S])\n`);
      return 2;
    }
  }
  const { runModelsCli } = await import("./models-cli.ts");
  try {
    return await runModelsCli(sub, { home: pionHome(), env: process.env, ...opts });
  } catch (err) {
    writeErr(`pion: ${errorMessage(err)}\n`);
    return 1;
  }
}

/**
 * The whole command line: a subcommand, a one-shot command, or a mode. `inlineExtensions` are
 * extensions given as factories (the reference's `main(args, { extensionFactories })`).
 */
export async function runCli(argv: string[], extra: { inlineExtensions?: InlineExtension[] } = {}): Promise<number> {
  if (argv[0] === "sessions") return runSessions(argv.slice(1));
  if (argv[0] === "models") return runModels(argv.slice(1));
  if (argv[0] === "trust") {
    const { runTrustCli } = await import("./trust-cli.ts");
    return runTrustCli(argv.slice(1), { home: pionHome(), cwd: process.cwd() });
  }
  if (argv[0] === "sandbox") {
    const { runSandboxCli } = await import("./sandbox-cli.ts");
    return runSandboxCli(argv.slice(1), { home: pionHome(), cwd: process.cwd(), out: writeOut, err: writeErr });
  }
  if (argv[0] === "install" || argv[0] === "remove" || argv[0] === "uninstall" || argv[0] === "list") {
    const { runPackagesCli } = await import("./packages-cli.ts");
    return runPackagesCli(argv[0] === "uninstall" ? "remove" : argv[0], argv.slice(1), { home: pionHome(), cwd: process.cwd(), env: process.env, out: writeOut, err: writeErr });
  }
  if (argv[0] === "update") {
    const { runUpdateCli } = await import("./packages-update.ts");
    return runUpdateCli(argv.slice(1), { home: pionHome(), cwd: process.cwd(), env: process.env, out: writeOut, err: writeErr });
  }
  if (argv[0] === "auth") {
    const { runAuthCli } = await import("./auth-cli.ts");
    return runAuthCli(argv.slice(1), { home: pionHome(), cwd: process.cwd(), env: process.env, out: writeOut, err: writeErr });
  }
  if (argv[0] === "mcp") {
    const [{ runMcpCli }, { decideProjectTrust }, { loadSettings, loadUserSettings }, { createCredentialGuard }, { loadModels }, { log }] = await Promise.all([
      import("../mcp/cli.ts"),
      import("../trust/project-trust.ts"),
      import("../config.ts"),
      import("../credentials/guard.ts"),
      import("../providers/models.ts"),
      import("../util/log.ts"),
    ]);
    const home = pionHome();
    const cwd = process.cwd();
    const user = loadUserSettings(home);
    const trust = decideProjectTrust({ home, cwd, defaultProjectTrust: user.defaultProjectTrust });
    const settings = loadSettings(home, cwd, trust.trusted, (msg) => log("settings", msg), user);
    // The servers `list` starts get what a session's get: pion's environment minus every provider's key.
    const guard = () => {
      const registry = loadModels(home, process.env);
      return createCredentialGuard({ env: process.env, credentials: () => registry.credentials(), shellEnv: settings.shellEnv });
    };
    return runMcpCli(argv.slice(1), { home, cwd, env: process.env, guard, projectTrusted: trust.trusted, out: writeOut, err: writeErr });
  }
  let parsed: ParsedArgs;
  try {
    parsed = parseArgs(argv);
  } catch (err) {
    return usageError(err);
  }
  const a = parsed.values;
  // As the reference does: extensions and the processes pion starts (tools, MCP servers) see
  // the switch as PI_OFFLINE=1, so their own automatic network activity can stay off too.
  if (isOffline(a.offline === true, process.env)) process.env.PI_OFFLINE = "1";
  // `-e npm:…` and `-e git:…` (or a git URL) name packages to install for this run (temporary-packages.ts).
  if (a.extension?.some((e) => /^(npm:|git:|https?:|ssh:)/.test(e.trim()))) a.extension = await (await import("./temporary-packages.ts")).temporaryPackages(a.extension, pionHome(), process.env);
  if (a.help) {
    const [{ renderHelp }, { extensionFlagsForHelp }] = await Promise.all([import("../cli/help.ts"), import("./help-flags.ts")]);
    const flags = await extensionFlagsForHelp({
      home: pionHome(),
      cwd: process.cwd(),
      extensions: a.extension ?? [],
      noExtensions: a["no-extensions"] === true,
      approve: a["no-approve"] ? false : a.approve ? true : undefined,
    });
    // Colours for a terminal only: `pion --help | less` or a file gets plain text.
    writeOut(`${renderHelp(VERSION, process.stdout.isTTY === true, flags)}\n`);
    return 0;
  }
  if (a.version) {
    writeOut(`${VERSION} ${TARGET}\n`);
    return 0;
  }
  // The one-shot commands load no extension, so an option set aside for one is unknown here.
  if (a.export !== undefined || a["list-models"] !== undefined) {
    try {
      finalizeArgs(argv, []);
    } catch (err) {
      return usageError(err);
    }
  }
  if (a.export !== undefined) return runExport(a.export, parsed.positionals[0]);
  if (a["list-models"] !== undefined) return runListModels(a, a["list-models"] === true ? undefined : a["list-models"]);
  const mode = a.print ? "print" : a.mode === "text" ? "print" : (a.mode ?? "print");
  if (!["rpc", "json", "print", "acp"].includes(mode)) {
    writeErr(`pion: unknown mode "${mode}": expected rpc, json, print, text or acp\n`);
    return 2;
  }
  // The agent's tools assume a POSIX system (bash, process groups, `/` paths): refused here, at
  // start-up, not as a failure in the middle of a run. The subcommands and --version/--help work.
  if (process.platform === "win32") {
    writeErr("pion: running the agent on Windows is not supported yet (its bash tool needs a POSIX shell and process groups, and its path checks POSIX paths); run pion under WSL\n");
    return 1;
  }
  let prompts = parsed.positionals;
  try {
    if (parsed.pending.length === 0) checkPositionals(mode, prompts);
  } catch (err) {
    return usageError(err);
  }
  if (a.sandbox !== undefined && !["off", "read-only", "workspace-write"].includes(a.sandbox)) {
    return usageError(new UsageError(`unknown sandbox mode "${a.sandbox}": expected off, read-only or workspace-write`));
  }
  const permissionMode = a["permission-mode"];
  if (permissionMode !== undefined && !["auto", "ask", "read-only"].includes(permissionMode)) {
    return usageError(new UsageError(`unknown permission mode "${permissionMode}": expected auto, ask or read-only`));
  }
  const opts = cliOptions(a, mode as "rpc" | "json" | "print" | "acp");
  if (extra.inlineExtensions?.length) opts.inlineExtensions = extra.inlineExtensions;
  try {
    Object.assign(opts, await runLimits(a));
  } catch (err) {
    return usageError(err);
  }
  if (parsed.pending.length > 0) {
    // Options no built-in flag knows: decided once the extensions have registered theirs.
    opts.resolveExtensionFlags = (registered: ExtraFlag[]) => {
      const final = finalizeArgs(argv, registered);
      checkPositionals(mode, final.positionals);
      prompts = final.positionals;
      return final.extensionFlags;
    };
  }
  if (mode === "acp") {
    if (prompts.length > 0) {
      writeErr(`pion: ACP mode takes no prompt arguments; the editor sends them\n`);
      return 2;
    }
    try {
      return await (await import("./acp.ts")).runAcpMode(opts);
    } catch (err) {
      writeErr(`pion: ${errorMessage(err)}\n`);
      return 1;
    }
  }
  // Loaded after the flags are checked, so --version, --help and usage errors stay instant.
  const { composeSession } = await import("./compose.ts");
  let composed: Awaited<ReturnType<typeof composeSession>>;
  try {
    composed = await composeSession(opts);
  } catch (err) {
    if (err instanceof UsageError) return usageError(err);
    writeErr(`pion: ${errorMessage(err)}\n`);
    return 1;
  }
  const code =
    mode === "rpc"
      ? await (await import("./rpc.ts")).runRpcMode(composed)
      : await (await import("./json.ts")).runJsonMode(composed, prompts, mode === "print" ? "print" : "json");
  await composed.close();
  return code;
}

/** --max-turns / --max-cost, checked (the checks load only when a limit flag is given). */
async function runLimits(a: ParsedArgs["values"]): Promise<{ maxTurns?: number; maxCostUsd?: number }> {
  const turns = a["max-turns"];
  const cost = a["max-cost"];
  if (turns === undefined && cost === undefined) return {};
  const { parseLimit } = await import("../session/limits.ts");
  return {
    ...(turns !== undefined ? { maxTurns: parseLimit("maxTurns", turns) } : {}),
    ...(cost !== undefined ? { maxCostUsd: parseLimit("maxCostUsd", cost) } : {}),
  };
}

/** The parsed flags as compose's plain options; the environment fills what no flag says. */
function cliOptions(a: ParsedArgs["values"], mode: "rpc" | "json" | "print" | "acp"): CliOptions {
  const env = process.env;
  return {
    cwd: process.cwd(),
    home: pionHome(),
    env,
    provider: a.provider,
    model: a.model,
    models: a.models,
    thinking: a.thinking,
    name: a.name,
    apiKey: a["api-key"],
    noSession: a["no-session"] === true,
    session: a.session,
    sessionId: a["session-id"],
    fork: a.fork,
    sessionDir: a["session-dir"] ?? sessionDirFromEnv(env),
    continue: a.continue === true,
    mode,
    extensions: a.extension ?? [],
    noExtensions: a["no-extensions"] === true,
    tools: a.tools,
    excludeTools: a["exclude-tools"],
    noTools: a["no-tools"] === true,
    noBuiltinTools: a["no-builtin-tools"] === true,
    skills: a.skill ?? [],
    noSkills: a["no-skills"] === true,
    promptTemplates: a["prompt-template"] ?? [],
    noPromptTemplates: a["no-prompt-templates"] === true,
    noContextFiles: a["no-context-files"] === true,
    systemPrompt: a["system-prompt"],
    appendSystemPrompt: a["append-system-prompt"] ?? [],
    noMcp: a["no-mcp"] === true,
    approve: a["no-approve"] ? false : a.approve ? true : undefined,
    permissionMode: a["permission-mode"] as CliOptions["permissionMode"],
    ...(a.sandbox !== undefined ? { sandbox: a.sandbox } : {}),
    allow: a.allow ?? [],
    deny: a.deny ?? [],
    offline: isOffline(a.offline === true, env),
    verbose: a.verbose === true,
  };
}

async function runExport(input: string, output: string | undefined): Promise<number> {
  const { exportSessionFile } = await import("./export-file.ts");
  try {
    writeOut(`Exported to: ${exportSessionFile(input, output, process.cwd())}\n`);
    return 0;
  } catch (err) {
    writeErr(`pion: ${errorMessage(err)}\n`);
    return 1;
  }
}

async function runListModels(a: ParsedArgs["values"], search: string | undefined): Promise<number> {
  const [{ loadModels }, { formatModelList }, { liveRegistry }] = await Promise.all([
    import("../providers/models.ts"),
    import("./list-models.ts"),
    import("./llama-models.ts"),
  ]);
  try {
    const override = { provider: a.provider, apiKey: a["api-key"] };
    const live = liveRegistry((extraProviders) => loadModels(pionHome(), process.env, override, { extraProviders }), process.env);
    await live.refresh(a.provider === "llama.cpp");
    writeOut(formatModelList(live.registry.available(), search));
    return 0;
  } catch (err) {
    writeErr(`pion: ${errorMessage(err)}\n`);
    return 1;
  }
}

