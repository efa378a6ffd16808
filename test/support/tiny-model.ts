import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { GgufType, readGgufMetadata, writeGguf, type GgufTensor, type GgufValue } from "./gguf.ts";

/**
 * A tiny Qwen2-architecture GGUF for protocol tests against a real llama-server: 2 layers,
 * hidden size 32, Qwen2's real tokenizer (copied from llama.cpp's models/ggml-vocab-qwen2.gguf).
 * Weights are small random numbers except for a planted bigram chain: the hidden state of a
 * chain token (its embedding passes the near-zero layers almost unchanged) points at the next
 * one's output row, so after the chat template's final "\n" the model says REPLY and then
 * <|im_end|>, whatever the prompt and sampler: a "stop" with known text, and "length" when
 * max_tokens is smaller than REPLY_TOKENS.
 */
export const REPLY = "Hello from llama";
export const REPLY_TOKENS = 3;
const CHAIN = ["Ċ", "Hello", "Ġfrom", "Ġllama", "<|im_end|>"];

const N_EMBD = 32;
const N_HEAD = 4;
const N_HEAD_KV = 2;
const N_FF = 64;
const N_LAYER = 2;
const TRAIN_CTX = 8192;
const VERSION = 1;

/** The model file beside the vocabulary (built once, then reused); `vocabPath` is the Qwen2 vocab GGUF. */
export function tinyModel(vocabPath: string): string {
  const out = join(dirname(vocabPath), `pion-tiny-qwen2-v${VERSION}.gguf`);
  if (existsSync(out)) return out;
  const bytes = buildTinyModel(readGgufMetadata(readFileSync(vocabPath)));
  const tmp = `${out}.${process.pid}.tmp`;
  writeFileSync(tmp, bytes);
  renameSync(tmp, out);
  return out;
}

/** Seeded uniform noise in [-scale, scale] (mulberry32). */
function noise(seed: number) {
  let s = seed >>> 0;
  return (n: number, scale: number): Float32Array => {
    const a = new Float32Array(n);
    for (let i = 0; i < n; i++) {
      s = (s + 0x6d2b79f5) >>> 0;
      let t = s;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      a[i] = ((((t ^ (t >>> 14)) >>> 0) / 4294967296) * 2 - 1) * scale;
    }
    return a;
  };
}

export function buildTinyModel(vocab: ReadonlyMap<string, GgufValue>): Uint8Array {
  const tokens = vocab.get("tokenizer.ggml.tokens")?.value as string[] | undefined;
  if (!tokens) throw new Error("the vocabulary file has no tokenizer.ggml.tokens");
  const nVocab = tokens.length;
  const chain = CHAIN.map((t) => {
    const id = tokens.indexOf(t);
    if (id < 0) throw new Error(`token ${t} is not in the vocabulary`);
    return id;
  });
  const rand = noise(36);
  const embd = rand(nVocab * N_EMBD, 0.035);
  const output = rand(nVocab * N_EMBD, 0.035);
  // Token chain[i] gets the unit direction i; the output row of chain[i + 1] reads it.
  for (let i = 0; i < chain.length - 1; i++) {
    embd.fill(0, chain[i]! * N_EMBD, (chain[i]! + 1) * N_EMBD);
    embd[chain[i]! * N_EMBD + i] = 1;
    output.fill(0, chain[i + 1]! * N_EMBD, (chain[i + 1]! + 1) * N_EMBD);
    output[chain[i + 1]! * N_EMBD + i] = 5;
  }
  const ones = (n: number) => new Float32Array(n).fill(1);
  const kv = (N_EMBD / N_HEAD) * N_HEAD_KV;
  const tensors: GgufTensor[] = [
    { name: "token_embd.weight", dims: [N_EMBD, nVocab], data: embd },
    { name: "output_norm.weight", dims: [N_EMBD], data: ones(N_EMBD) },
    { name: "output.weight", dims: [N_EMBD, nVocab], data: output },
  ];
  for (let l = 0; l < N_LAYER; l++) {
    const blk = (name: string, dims: number[], data?: Float32Array): GgufTensor => ({
      name: `blk.${l}.${name}.weight`,
      dims,
      data: data ?? rand(dims.reduce((a, d) => a * d, 1), 0.035),
    });
    tensors.push(
      blk("attn_norm", [N_EMBD], ones(N_EMBD)),
      blk("attn_q", [N_EMBD, N_EMBD]),
      blk("attn_k", [N_EMBD, kv]),
      blk("attn_v", [N_EMBD, kv]),
      blk("attn_output", [N_EMBD, N_EMBD]),
      blk("ffn_norm", [N_EMBD], ones(N_EMBD)),
      blk("ffn_gate", [N_EMBD, N_FF]),
      blk("ffn_up", [N_EMBD, N_FF]),
      blk("ffn_down", [N_FF, N_EMBD]),
    );
  }
  const u32 = (value: number): GgufValue => ({ type: GgufType.u32, value });
  const meta = new Map<string, GgufValue>([
    ["general.architecture", { type: GgufType.string, value: "qwen2" }],
    ["general.name", { type: GgufType.string, value: "pion-tiny" }],
    ["general.file_type", u32(0)],
    ["qwen2.block_count", u32(N_LAYER)],
    ["qwen2.context_length", u32(TRAIN_CTX)],
    ["qwen2.embedding_length", u32(N_EMBD)],
    ["qwen2.feed_forward_length", u32(N_FF)],
    ["qwen2.attention.head_count", u32(N_HEAD)],
    ["qwen2.attention.head_count_kv", u32(N_HEAD_KV)],
    ["qwen2.rope.freq_base", { type: GgufType.f32, value: 1000000 }],
    ["qwen2.attention.layer_norm_rms_epsilon", { type: GgufType.f32, value: 1e-6 }],
  ]);
  for (const [k, val] of vocab) if (k.startsWith("tokenizer.")) meta.set(k, val);
  return writeGguf(meta, tensors);
}
