/**
 * The servers' logging notifications, appended to `$PION_HOME/mcp.log` as
 * `<time> [<server>] <level> <logger>: <message>`; past 5 MB the file moves to `mcp.log.1`.
 * Masked before writing; a file that cannot be written is reported once on stderr.
 */
import { appendFileSync, mkdirSync, renameSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { log } from "../util/log.ts";

export const MCP_LOG_MAX_BYTES = 5 * 1024 * 1024;

export interface LogNotice {
  level: string;
  logger?: string;
  data: unknown;
}

export function createServerLog(path: string, mask: (s: string) => string, maxBytes = MCP_LOG_MAX_BYTES) {
  let failed = false;
  return (server: string, n: LogNotice): void => {
    const message = typeof n.data === "string" ? n.data : JSON.stringify(n.data);
    const line = mask(`${new Date().toISOString()} [${server}] ${n.level} ${n.logger ?? "-"}: ${message}`.replace(/\r?\n/g, "\\n"));
    try {
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      let size = 0;
      try {
        size = statSync(path).size;
      } catch {
        // no file yet
      }
      if (size > 0 && size + line.length + 1 > maxBytes) renameSync(path, `${path}.1`);
      appendFileSync(path, `${line}\n`, { mode: 0o600 });
    } catch (err) {
      if (!failed) log("mcp", `cannot write ${path}: ${err instanceof Error ? err.message : String(err)}`);
      failed = true;
    }
  };
}
