/**
 * The reference agent in RPC mode for differential e2e tests: the same requests as a Pion, its
 * records parsed from stdout. Needs PION_REFERENCE_PKG (the folder of @earendil-works/pi-coding-agent).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Rec } from "./pion.ts";
import { RecordLog } from "./record-log.ts";
import { jsonLines } from "../../src/rpc/jsonl.ts";

/** What the differential scenario needs of an agent speaking RPC (Pion has it; `referenceRpc` here too). */
export interface RpcAgent {
  readonly records: Rec[];
  request(cmd: Rec): Promise<Rec>;
  waitFor(pred: string | ((r: Rec) => boolean), from?: number): Promise<Rec>;
  close(): Promise<number>;
}

const REFERENCE = process.env.PION_REFERENCE_PKG;
const REFERENCE_CLI = join(REFERENCE ?? "", "dist/cli.js");
export const NO_REFERENCE = !REFERENCE ? "PION_REFERENCE_PKG (the folder of @earendil-works/pi-coding-agent) is not set" : existsSync(REFERENCE_CLI) ? undefined : `${REFERENCE_CLI} does not exist`;

/**
 * The reference in RPC mode, its home and agent folder in `home`, against the models.json there;
 * `program`: a program on the reference's SDK run in its place (`bun program ...args`).
 */
export function referenceRpc(args: string[], dirs: { home: string; cwd: string }, env: Record<string, string>, program = REFERENCE_CLI): RpcAgent {
  const log = new RecordLog(() => stderr);
  let stderr = "";
  const proc = Bun.spawn([process.execPath, program, ...args], {
    cwd: dirs.cwd,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dirs.home, PI_CODING_AGENT_DIR: dirs.home, PI_OFFLINE: "1", PI_SKIP_VERSION_CHECK: "1", PI_TELEMETRY: "0", ...env },
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  void (async () => {
    for await (const chunk of proc.stderr) stderr += new TextDecoder().decode(chunk);
  })();
  const read = (async () => {
    for await (const rec of jsonLines(proc.stdout)) if ("line" in rec && rec.line.startsWith("{")) log.add(JSON.parse(rec.line) as Rec);
  })();
  let next = 0;
  return {
    records: log.records,
    request: (cmd) => {
      const id = `r${++next}`;
      const answer = log.waitFor((r) => r.type === "response" && r.id === id, log.records.length);
      proc.stdin.write(`${JSON.stringify({ ...cmd, id })}\n`);
      proc.stdin.flush();
      return answer;
    },
    waitFor: (pred, from) => log.waitFor(pred, from),
    close: async () => {
      proc.stdin.end();
      const code = await proc.exited;
      await read;
      return code;
    },
  };
}

