/**
 * Stored OAuth sign-ins of MCP servers: `$PION_HOME/mcp-auth.json` (0600, replaced atomically
 * under a lock), one record per server name and URL, so servers with one URL under two names
 * sign in separately and one name and URL in two mcp.json files share a sign-in. Never in a
 * session: the tokens are credentials, and the guard masks them once read.
 */
import { join } from "node:path";
import * as v from "valibot";
import { withFileLock, writeFileAtomic } from "../credentials/file-lock.ts";
import { readJsonFile } from "../util/json-file.ts";

export interface AuthRecord {
  tokens?: { access_token: string; token_type: string; refresh_token?: string; expires_in?: number; scope?: string; id_token?: string };
  /** When the tokens were saved (ms since the epoch), for their expiry. */
  savedAt?: number;
  /** The client pion registered (or was configured with), with the issuer the SDK stamps on it. */
  client?: Record<string, unknown>;
  codeVerifier?: string;
  /** The redirect URI of the sign-in, for refreshes and the next registration check. */
  redirectUri?: string;
  discovery?: Record<string, unknown>;
}

const FileSchema = v.looseObject({ servers: v.optional(v.record(v.string(), v.record(v.string(), v.unknown()))) });

export const authFilePath = (home: string) => join(home, "mcp-auth.json");
export const authKey = (name: string, url: string) => `${name} ${url}`;

export class McpAuthStore {
  constructor(readonly path: string) {}

  all(): Record<string, AuthRecord> {
    const raw = readJsonFile(this.path);
    if (raw === undefined) return {};
    const parsed = v.safeParse(FileSchema, raw);
    if (!parsed.success) throw new Error(`Invalid ${this.path}: expected {"servers": {...}}`);
    return (parsed.output.servers ?? {}) as Record<string, AuthRecord>;
  }

  get(key: string): AuthRecord {
    return this.all()[key] ?? {};
  }

  /** Changes one record (`undefined` from `change` deletes it); other records are kept as they are. */
  async update(key: string, change: (r: AuthRecord) => AuthRecord | undefined): Promise<void> {
    await withFileLock(this.path, () => {
      const raw = (readJsonFile(this.path) as Record<string, unknown> | undefined) ?? {};
      const servers = { ...this.all() };
      const next = change({ ...(servers[key] ?? {}) });
      if (next === undefined) delete servers[key];
      else servers[key] = next;
      writeFileAtomic(this.path, `${JSON.stringify({ ...raw, servers }, null, 2)}\n`);
    });
  }
}
