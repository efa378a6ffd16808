// Spawned by multi-process.test.ts: one pion-like process appending to its own session.
import { openSqliteStore } from "../../../src/store/sqlite-store.ts";
import { chain, header } from "./helpers.ts";

const [dbPath, sessionId, count] = process.argv.slice(2);
if (!dbPath || !sessionId || !count) throw new Error("usage: append-worker.ts <db> <sessionId> <count>");
const store = openSqliteStore(dbPath);
store.acquireSession(sessionId);
store.createSession(header(sessionId));
let parentId: string | null = null;
for (const entry of chain(Number(count), sessionId.slice(0, 1))) {
  store.append(sessionId, { ...entry, parentId });
  parentId = entry.id;
  store.listSessions({ limit: 5 }); // interleave reads with the other writer
}
store.close();
process.stdout.write("done\n");
