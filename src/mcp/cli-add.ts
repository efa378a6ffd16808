/**
 * The options of `pion mcp add` as an mcp.json entry: a stdio server after `--`, or an HTTP
 * server with `--url`, and the options both take. Pure; throws a message for the user.
 */
import { EXPOSURES } from "./exposure.ts";

export const ADD_USAGE =
  "usage: pion mcp add NAME [--local] [--exposure MODE] [--description TEXT] -- COMMAND [ARGS...] [--env K=V] [--cwd DIR]\n" +
  "       pion mcp add NAME [--local] --url URL [--header K=V] [--bearer-token-env-var NAME] [--oauth-client-id ID] [--oauth-client-secret S]\n" +
  "            [--oauth-callback-port PORT] [--oauth-client-name NAME] [--oauth-client-registration auto|cimd|dcr]";

const STDIO_ONLY = ["--env", "--cwd"];
const HTTP_ONLY = ["--header", "--bearer-token-env-var", "--oauth-client-id", "--oauth-client-secret", "--oauth-callback-port", "--oauth-client-name", "--oauth-client-registration"];

/** `args`: everything after `add`; the server's name is the one argument that is not an option. */
export function addEntry(args: string[]): { name: string; local: boolean; entry: Record<string, unknown> } {
  let name: string | undefined;
  let local = false;
  let command: string[] | undefined;
  const seen = new Set<string>();
  const env: Record<string, string> = {};
  const headers: Record<string, string> = {};
  const oauth: Record<string, unknown> = {};
  const common: Record<string, unknown> = {};
  let url: string | undefined;
  let cwd: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const value = () => {
      const val = args[++i];
      if (val === undefined) throw new Error(`Option ${a} needs a value`);
      return val;
    };
    if (a === "--") {
      command = args.slice(i + 1);
      break;
    }
    seen.add(a);
    if (a === "--local" || a === "-l") local = true;
    else if (a === "--url") url = value();
    else if (a === "--cwd") cwd = value();
    else if (a === "--env") Object.assign(env, pair(value(), a));
    else if (a === "--header") Object.assign(headers, pair(value(), a));
    else if (a === "--bearer-token-env-var") {
      const v = value();
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(v)) throw new Error(`--bearer-token-env-var expects a variable name, got "${v}"`);
      headers.Authorization = `Bearer \${${v}}`;
    } else if (a === "--oauth-client-id") oauth.clientId = value();
    else if (a === "--oauth-client-secret") oauth.clientSecret = value();
    else if (a === "--oauth-client-name") oauth.clientName = value();
    else if (a === "--oauth-callback-port") {
      const port = Number(value());
      if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error("--oauth-callback-port expects a port number");
      oauth.callbackPort = port;
    } else if (a === "--oauth-client-registration") {
      const mode = value();
      if (!["auto", "cimd", "dcr"].includes(mode)) throw new Error(`--oauth-client-registration expects auto, cimd or dcr, got "${mode}"`);
      oauth.clientRegistration = mode;
    } else if (a === "--exposure") {
      const mode = value();
      if (!(EXPOSURES as readonly string[]).includes(mode) && mode !== "codemode-deferred") throw new Error(`--exposure expects ${EXPOSURES.join(", ")}, got "${mode}"`);
      common.exposure = mode;
    } else if (a === "--description") common.description = value();
    else if (!a.startsWith("-") && name === undefined) name = a;
    else throw new Error(a.startsWith("-") ? `Unknown option: ${a}` : `Unexpected argument "${a}" (the command goes after --)`);
  }
  if (name === undefined) throw new Error(ADD_USAGE);
  const stdio = command !== undefined && command.length > 0;
  if (stdio === (url !== undefined)) throw new Error("give either -- COMMAND [ARGS...] (stdio) or --url URL (streamable HTTP)");
  const wrong = (stdio ? HTTP_ONLY : STDIO_ONLY).find((o) => seen.has(o));
  if (wrong) throw new Error(`${wrong} applies only to ${stdio ? "a --url" : "a stdio"} server`);
  if (oauth.clientRegistration === "cimd" && (oauth.clientId !== undefined || oauth.clientName !== undefined)) {
    throw new Error("--oauth-client-registration cimd cannot be combined with --oauth-client-id or --oauth-client-name");
  }
  const some = (o: Record<string, unknown>) => Object.keys(o).length > 0;
  const entry: Record<string, unknown> = stdio
    ? { command: command![0], ...(command!.length > 1 ? { args: command!.slice(1) } : {}), ...(some(env) ? { env } : {}), ...(cwd ? { cwd } : {}) }
    : { url, ...(some(headers) ? { headers } : {}), ...(some(oauth) ? { oauth } : {}) };
  return { name, local, entry: { ...entry, ...common } };
}

function pair(s: string, flag: string): Record<string, string> {
  const eq = s.indexOf("=");
  if (eq <= 0) throw new Error(`${flag} expects KEY=VALUE, got "${s}"`);
  return { [s.slice(0, eq)]: s.slice(eq + 1) };
}
