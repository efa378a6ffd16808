import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Subprocess } from "bun";
import { tinyModel } from "./tiny-model.ts";

/**
 * A real llama-server for the llama.cpp provider's tests. PION_LLAMA_SERVER is the binary
 * (scripts/llama-server.sh prints it); the Qwen2 vocabulary the tiny model borrows lies beside
 * it in the cache (or at PION_LLAMA_VOCAB).
 */
export function llamaServerBinary(): { bin: string; vocab: string } | { missing: string } {
  const bin = process.env.PION_LLAMA_SERVER;
  if (!bin) return { missing: "PION_LLAMA_SERVER is not set (run scripts/llama-server.sh and export its output)" };
  if (!existsSync(bin)) return { missing: `PION_LLAMA_SERVER=${bin} does not exist` };
  const vocab = process.env.PION_LLAMA_VOCAB ?? join(dirname(dirname(bin)), "ggml-vocab-qwen2.gguf");
  if (!existsSync(vocab)) return { missing: `the Qwen2 vocabulary ${vocab} is missing (set PION_LLAMA_VOCAB)` };
  return { bin, vocab };
}

export interface LlamaServer {
  url: string;
  port: number;
  /** What the server printed (stderr and stdout), for failure messages. */
  output(): string;
  stop(): Promise<void>;
}

/** A port that was free a moment ago. */
function freePort(): number {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  return port;
}

/**
 * Starts llama-server on 127.0.0.1 with a 2048-token context and `args`: the tiny model as
 * "tiny", unless args give `--models-dir` (router mode). Resolves once /health answers 200.
 */
export async function startLlamaServer(o: { bin: string; vocab: string }, args: string[] = [], timeoutMs = 60_000): Promise<LlamaServer> {
  const port = freePort();
  const model = args.includes("--models-dir") ? [] : ["-m", tinyModel(o.vocab), "--alias", "tiny"];
  const proc: Subprocess<"ignore", "pipe", "pipe"> = Bun.spawn(
    [o.bin, ...model, "-c", "2048", "-np", "1", "-t", "1", "--host", "127.0.0.1", "--port", String(port), "--no-webui", ...args],
    { stdin: "ignore", stdout: "pipe", stderr: "pipe" },
  );
  let log = "";
  const drain = async (s: ReadableStream<Uint8Array>) => {
    const dec = new TextDecoder();
    for await (const chunk of s) log = (log + dec.decode(chunk, { stream: true })).slice(-20_000);
  };
  void drain(proc.stdout);
  void drain(proc.stderr);
  const url = `http://127.0.0.1:${port}`;
  const server: LlamaServer = {
    url,
    port,
    output: () => log,
    // SIGTERM first: a router stops the model servers it started.
    stop: async () => {
      proc.kill("SIGTERM");
      const timer = setTimeout(() => proc.kill("SIGKILL"), 3000);
      await proc.exited;
      clearTimeout(timer);
    },
  };
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`llama-server exited with ${proc.exitCode}:\n${log.slice(-3000)}`);
    const ok = await fetch(`${url}/health`).then((r) => r.ok, () => false);
    if (ok) return server;
    await Bun.sleep(100);
  }
  await server.stop();
  throw new Error(`llama-server did not become healthy in ${timeoutMs / 1000} s:\n${log.slice(-3000)}`);
}
