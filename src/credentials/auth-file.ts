/**
 * auth.json, the reference agent's credential file: one entry per provider id, either
 * `{ "type": "api_key", "key": "<literal | $NAME | !command>", "env": { ... } }` or an OAuth
 * login `{ "type": "oauth", "access", "refresh", "expires" (ms), ...provider extras }`
 * (`accountId` for ChatGPT, `enterpriseUrl` for Copilot, kept as written). Several files may be
 * read (pion's folder, then the reference's); the first that has a provider wins.
 */
import { existsSync, readFileSync } from "node:fs";

export interface ApiKeyCredential {
  type: "api_key";
  key?: string;
  /** Variables for this provider only, over the process environment. */
  env?: Record<string, string>;
}

export interface OAuthCredential {
  type: "oauth";
  access: string;
  refresh: string;
  /** When `access` stops working, in ms since the epoch. */
  expires: number;
  [extra: string]: unknown;
}

export type StoredCredential = ApiKeyCredential | OAuthCredential;

/** A provider's credential and the file it came from (a refresh writes back there). */
export interface AuthEntry {
  credential: StoredCredential;
  path: string;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** One stored credential, or why it is not one. */
export function parseCredential(value: unknown): StoredCredential | string {
  if (!isRecord(value)) return "not an object";
  if (value.type === "api_key") {
    if (value.key !== undefined && typeof value.key !== "string") return '"key" is not a string';
    const env = value.env;
    if (env !== undefined && (!isRecord(env) || !Object.values(env).every((e) => typeof e === "string"))) {
      return '"env" is not an object of strings';
    }
    return value as unknown as ApiKeyCredential;
  }
  if (value.type === "oauth") {
    if (typeof value.access !== "string" || typeof value.refresh !== "string") return '"access" and "refresh" must be strings';
    if (typeof value.expires !== "number" || !Number.isFinite(value.expires)) return '"expires" must be a number (ms)';
    return value as unknown as OAuthCredential;
  }
  return `unknown "type" ${JSON.stringify(value.type)}`;
}

/**
 * A file's text as credentials per provider, and what was wrong with it. Entries that are
 * malformed are left out one by one; a file that is not a JSON object yields none.
 */
export function parseAuthJson(text: string): { credentials: Map<string, StoredCredential>; problems: string[] } {
  const credentials = new Map<string, StoredCredential>();
  let data: unknown;
  try {
    data = JSON.parse(text.replace(/^\uFEFF/, ""));
  } catch (err) {
    return { credentials, problems: [`not valid JSON (${err instanceof Error ? err.message : String(err)})`] };
  }
  if (!isRecord(data)) return { credentials, problems: ["expected an object of providers"] };
  const problems: string[] = [];
  for (const [provider, value] of Object.entries(data)) {
    const parsed = parseCredential(value);
    if (typeof parsed === "string") problems.push(`"${provider}": ${parsed}`);
    else credentials.set(provider, parsed);
  }
  return { credentials, problems };
}

/** The text of a file, or undefined when it does not exist. */
function readIfExists(path: string): string | undefined {
  // Checked first: a missing file is the common case, and a thrown ENOENT costs start-up time.
  if (!existsSync(path)) return undefined;
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}

/**
 * Every provider's credential from `paths` (first file wins per provider). A file that cannot
 * be read or parsed gets one `warn` line naming it; it never stops pion.
 */
export function readAuthFiles(paths: readonly string[], warn: (line: string) => void): Map<string, AuthEntry> {
  const out = new Map<string, AuthEntry>();
  for (const path of paths) {
    let text: string | undefined;
    try {
      text = readIfExists(path);
    } catch (err) {
      warn(`pion: ignoring ${path}: ${err instanceof Error ? err.message : String(err)}`);
      continue;
    }
    if (text === undefined) continue;
    let { credentials, problems } = parseAuthJson(text);
    // The reference rewrites the file in place under its lock: a half-written file is read again once the lock is gone.
    for (let i = 0; i < 20 && problems.length > 0 && existsSync(`${path}.lock`); i++) {
      Bun.sleepSync(50);
      ({ credentials, problems } = parseAuthJson(readIfExists(path) ?? "{}"));
    }
    if (problems.length > 0) warn(`pion: ignoring ${problems.length === 1 && credentials.size === 0 ? "" : "part of "}${path}: ${problems.join("; ")}`);
    for (const [provider, credential] of credentials) if (!out.has(provider)) out.set(provider, { credential, path });
  }
  return out;
}
