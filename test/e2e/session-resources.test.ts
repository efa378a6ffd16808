/**
 * pi-ai's per-session cleanups (registerSessionResourceCleanup) run when pion leaves a session,
 * as the reference runs them when it disposes one: after session_shutdown on new_session (the
 * session left behind), and when the process ends (the session it was on, after session_shutdown
 * with reason quit). Reload keeps the session.
 */
import { expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { Pion, tempDirs } from "../support/pion.ts";

test("a registered session cleanup runs for the session left by new_session, and for the last one at exit", async () => {
  const { home, cwd } = tempDirs();
  const ext = join(dirname(home), "cleanup-ext.ts");
  const log = join(dirname(home), "cleanups.log");
  writeFileSync(
    ext,
    `import { appendFileSync } from "node:fs";
import { registerSessionResourceCleanup } from "@earendil-works/pi-ai";
registerSessionResourceCleanup((id) => appendFileSync(${JSON.stringify(log)}, "cleanup:" + id + "\\n"));
export default function (pi) {
  pi.on("session_shutdown", (ev) => appendFileSync(${JSON.stringify(log)}, "shutdown:" + ev.reason + "\\n"));
}
`,
  );
  const p = new Pion({ home, cwd, args: ["--mode", "rpc", "-e", ext] });
  const id = async () => String((await p.request({ type: "get_state" })).data.sessionId);
  const first = await id();
  expect(existsSync(log)).toBe(false);
  await p.request({ type: "new_session" });
  const second = await id();
  expect(second).not.toBe(first);
  expect(readFileSync(log, "utf8")).toBe(`shutdown:new\ncleanup:${first}\n`);
  await p.close();
  expect(readFileSync(log, "utf8")).toBe(`shutdown:new\ncleanup:${first}\nshutdown:quit\ncleanup:${second}\n`);
});
