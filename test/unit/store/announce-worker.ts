// Spawned by multi-process.test.ts: appends until killed, announcing each entry after its append returns.
import { withJsonlExport } from "../../../src/store/jsonl-export.ts";
import { openSqliteStore } from "../../../src/store/sqlite-store.ts";
import { chain, header } from "./helpers.ts";

const [dbPath, sessionId, file] = process.argv.slice(2);
if (!dbPath || !sessionId || !file) throw new Error("usage: announce-worker.ts <db> <sessionId> <jsonl>");
const store = withJsonlExport(openSqliteStore(dbPath));
store.acquireSession(sessionId);
store.createSession(header(sessionId), file);
for (const entry of chain(20_000)) {
  store.append(sessionId, entry);
  await Bun.write(Bun.stdout, `${entry.id}\n`); // awaited: an id is announced only once it reached the pipe
}
