/**
 * The cost of credential masking on the RPC bash byte path, in process: 1 GB of output in the
 * shell's 256 KB reads through the JSON escaper alone (no credential known: the masker is
 * skipped), and through the masker then the escaper with 1 and 3 known keys. Two kinds of
 * output: `yes`-style lines and base64 of random bytes. BENCH_MASK_MB overrides the size (1024).
 * Figures are the process's CPU time (user + system), which a busy shared machine distorts
 * far less than wall time; the loop is single-threaded, so on an idle machine they agree.
 */
import { createCredentialGuard, type Credential } from "../src/credentials/guard.ts";
import { JsonBytesEscaper } from "../src/util/json-bytes.ts";
import { header, iterations, printTable, type Row } from "./lib.ts";

const N = iterations(3);
const MB = Number(process.env.BENCH_MASK_MB ?? 1024);
const CHUNK = 1 << 18;
header("masking", N);

const enc = new TextEncoder();
const lines = enc.encode("0123456789abcdef".repeat(4).concat("\n").repeat(Math.ceil(CHUNK / 65)).slice(0, CHUNK));
const random = enc.encode(Buffer.from(crypto.getRandomValues(new Uint8Array((CHUNK * 3) / 4))).toString("base64").slice(0, CHUNK));
const keys: Credential[] = [
  { label: "ANTHROPIC_API_KEY", envNames: [], value: `sk-ant-api03-${"x".repeat(95)}` },
  { label: "OPENAI_API_KEY", envNames: [], value: `sk-proj-${"y".repeat(156)}` },
  { label: "local apiKey", envNames: [], value: "test-key" },
];
const prefix = enc.encode('{"type":"bash_execution_update","delta":"');
const suffix = enc.encode('"}\n');

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** CPU ms to pass MB of `chunk` through the escaper, masked with `known` keys first (none: no masker). */
function run(chunk: Uint8Array, known: Credential[]): number {
  const mask = createCredentialGuard({ env: {}, credentials: () => known }).byteStream();
  const escaper = new JsonBytesEscaper();
  const chunks = Math.round((MB * 1048576) / CHUNK);
  let out = 0;
  const t0 = cpuMs();
  for (let i = 0; i < chunks; i++) {
    const bytes = mask ? mask.push(chunk, false) : chunk;
    out += escaper.line(prefix, bytes, suffix).length;
  }
  const ms = cpuMs() - t0;
  if (out === 0) throw new Error("nothing escaped");
  return ms;
}

const rows: Row[] = [];
for (const [label, chunk] of [["yes lines", lines], ["base64 (urandom)", random]] as const) {
  for (const [what, known] of [["escaper alone (no key known)", []], ["masker + escaper, 1 key", keys.slice(0, 1)], ["masker + escaper, 3 keys", keys]] as const) {
    const ms: number[] = [];
    for (let i = 0; i < N; i++) ms.push(run(chunk, [...known]));
    rows.push({ metric: `${MB} MB of ${label}: ${what}`, unit: "ms", pion: ms });
  }
}
printTable("credential masking on the bash byte path (in process, CPU time)", rows);
