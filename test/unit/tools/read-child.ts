/**
 * Runs the read tool once in a process of its own, for what a test cannot change in its own
 * process (the user it runs as, the home folder). argv: cwd, path. Prints {"text"} or {"error"}.
 */
import { createReadTool } from "../../../src/tools/read.ts";

const [cwd, path] = process.argv.slice(2) as [string, string];
const read = createReadTool();
try {
  const r = await read.execute(await read.parse({ path }), { signal: new AbortController().signal, callId: "c", cwd });
  console.log(JSON.stringify({ text: r.content.flatMap((c) => (c.type === "text" ? [c.text] : [])).join("\n") }));
} catch (err) {
  console.log(JSON.stringify({ error: err instanceof Error ? err.message : String(err) }));
}
