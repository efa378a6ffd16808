import { existsSync, linkSync, rmSync, writeFileSync } from "node:fs";
import { log } from "../util/log.ts";

/** In the binary: a new database as build.ts made it (openSqliteStore's pragmas and every migration), gzipped, in base64. */
declare const PION_DB_TEMPLATE: string | undefined;

/**
 * In the binary, writes a database that does not exist yet at `dbPath` from the template, 0600,
 * sparing its first opener the pragmas and migrations (5.4 -> 2.0 ms). It appears whole or not at
 * all: written beside it first, then linked in, which fails if another process made one meanwhile
 * (theirs is used). Any failure leaves the making to openSqliteStore, as from source.
 */
export function writeFromTemplate(dbPath: string): void {
  if (typeof PION_DB_TEMPLATE !== "string" || existsSync(dbPath)) return;
  const next = `${dbPath}.${process.pid}.new`;
  try {
    writeFileSync(next, Bun.gunzipSync(Buffer.from(PION_DB_TEMPLATE, "base64")), { mode: 0o600, flag: "wx" });
    linkSync(next, dbPath);
  } catch (err) {
    const code = err instanceof Error && "code" in err ? err.code : undefined;
    if (code !== "EEXIST") log("store", "a new database could not be written from its template; it is made here", { error: String(err) });
  } finally {
    rmSync(next, { force: true });
  }
}
