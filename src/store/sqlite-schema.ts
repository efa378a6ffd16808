import type { Database } from "bun:sqlite";
import { PionError } from "../util/errors.ts";

/**
 * Schema version N is reached by running MIGRATIONS[0..N-1] in order; `PRAGMA user_version`
 * records N. Append new migrations, never edit shipped ones.
 */
const MIGRATIONS: ReadonlyArray<(db: Database) => void> = [
  (db) => {
    // Only the session row changes after insert: leaf pointer, name, counters, updated_at.
    db.run(`CREATE TABLE session (
      id             TEXT PRIMARY KEY,
      cwd            TEXT NOT NULL,
      name           TEXT,
      parent_session TEXT,
      file           TEXT UNIQUE,
      leaf_id        TEXT,
      created_at     TEXT NOT NULL,
      updated_at     TEXT NOT NULL,
      header         TEXT NOT NULL,
      first_message  TEXT,
      message_count  INTEGER NOT NULL DEFAULT 0,
      entry_count    INTEGER NOT NULL DEFAULT 0
    )`);
    db.run("CREATE INDEX session_updated ON session (updated_at DESC, id DESC)");
    db.run("CREATE INDEX session_cwd_updated ON session (cwd, updated_at DESC, id DESC)");
    // Insert-only. `body` is the entry's JSON, byte-for-byte the line the JSONL export writes.
    db.run(`CREATE TABLE entry (
      seq        INTEGER PRIMARY KEY,
      session_id TEXT NOT NULL REFERENCES session (id),
      id         TEXT NOT NULL,
      parent_id  TEXT,
      type       TEXT NOT NULL,
      created_at TEXT NOT NULL,
      body       TEXT NOT NULL,
      UNIQUE (session_id, id)
    )`);
    db.run("CREATE INDEX entry_session_seq ON entry (session_id, seq)");
    // rowid = entry.seq; rows are written in the same transaction as their entry.
    db.run("CREATE VIRTUAL TABLE entry_fts USING fts5 (text, role UNINDEXED, tokenize = 'unicode61 remove_diacritics 2')");
    db.run(`CREATE TABLE lock (
      session_id  TEXT PRIMARY KEY,
      pid         INTEGER NOT NULL,
      start       TEXT NOT NULL,
      acquired_at TEXT NOT NULL
    )`);
  },
  (db) => {
    // A summary of the session as its last writer left it (SessionCache), so opening a big
    // session does not have to read its entries to answer get_state.
    db.run("ALTER TABLE session ADD COLUMN cache TEXT");
  },
  (db) => {
    // A message entry's role, so the tree and the context can be built without reading bodies;
    // where its message is the body's last field, the offset (in UTF-16 units; see the next
    // migration) where the message's JSON starts: it runs to the body's closing brace and is
    // answered without a parse.
    db.run("ALTER TABLE entry ADD COLUMN role TEXT");
    db.run("ALTER TABLE entry ADD COLUMN message_at INTEGER");
    db.run("UPDATE entry SET role = body ->> '$.message.role' WHERE type = 'message'");
    // The full-text index is brought up to date before each search (imports and appends skip
    // it): `upto` is the last entry.seq indexed. Everything written so far already is.
    db.run("CREATE TABLE fts_state (upto INTEGER NOT NULL)");
    db.run("INSERT INTO fts_state SELECT coalesce(max(seq), 0) FROM entry");
  },
  (db) => {
    // message_at is kept only where everything before it is ASCII, so it counts the body's bytes
    // too and the message is cut from them in SQL without a check per row. The offsets written
    // before this are UTF-16 units: one is a byte offset exactly when the 10 bytes before it are
    // the key `"message":` (the key's text occurs once before the message; a non-ASCII id or time
    // before it moves the key's bytes past the offset). Every other offset goes.
    db.run(`UPDATE entry SET message_at = NULL
      WHERE message_at IS NOT NULL AND substr(CAST(body AS BLOB), message_at - 9, 10) IS NOT X'226d657373616765223a'`);
  },
  (db) => {
    // Allow rules pion's permission gate granted (a host's allow_always answer), each with the
    // permission entry that records it, written in that entry's transaction; insert-only, in
    // rowid order. Imports never write it: an entry's `addedRules` from a file grants nothing.
    // Nothing is carried over from entries written before this: those may have been imported.
    // (IF NOT EXISTS: a database set back to an older version runs this again.)
    db.run(`CREATE TABLE IF NOT EXISTS granted_rule (
      session_id TEXT NOT NULL,
      entry_id   TEXT NOT NULL,
      rule       TEXT NOT NULL,
      FOREIGN KEY (session_id, entry_id) REFERENCES entry (session_id, id)
    )`);
    db.run("CREATE INDEX IF NOT EXISTS granted_rule_session ON granted_rule (session_id)");
  },
  (db) => {
    // A JSONL file in the session folder that the database did not write or import (the
    // reference's, or pion's own after the database was lost) is listed from a summary of it read
    // cheaply: a row with `file_only` set and no entries, until the session is opened (file-index.ts).
    // The file's size and mtime when it was summed up tell when to read it again.
    // (A database set back to an older version runs this again: columns it has are kept.)
    const has = new Set(db.query<{ name: string }, []>("PRAGMA table_info(session)").all().map((c) => c.name));
    for (const [column, type] of [["file_only", "INTEGER"], ["file_size", "INTEGER"], ["file_mtime", "REAL"]]) {
      if (!has.has(column!)) db.run(`ALTER TABLE session ADD COLUMN ${column} ${type}`);
    }
    // Files read that are no session of their own (a copy of a stored session under another name,
    // a v1 file whose v3 copy pion wrote): not read again until their size or mtime changes.
    db.run("CREATE TABLE IF NOT EXISTS file_skip (path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime REAL NOT NULL)");
  },
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/** Brings the database to SCHEMA_VERSION; concurrent openers serialize on the write lock. */
export function migrate(db: Database): void {
  db.transaction(() => {
    const row = db.query<{ user_version: number }, []>("PRAGMA user_version").get();
    const from = row?.user_version ?? 0;
    if (from > SCHEMA_VERSION) {
      throw new PionError(
        `Session database schema version ${from} is newer than this pion supports (${SCHEMA_VERSION}); upgrade pion`,
        "schema_too_new",
      );
    }
    for (let v = from; v < SCHEMA_VERSION; v++) MIGRATIONS[v]!(db);
    if (from !== SCHEMA_VERSION) db.run(`PRAGMA user_version = ${SCHEMA_VERSION}`);
  }).immediate();
}
