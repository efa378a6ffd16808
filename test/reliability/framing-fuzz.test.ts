/**
 * Framing fuzz: one pion process takes a storm of generated and mutated records written in
 * large batches, and must answer every non-blank line exactly once, never exit, never hang.
 *
 * The expected answer for each line is computed here with the same rules the wire contract
 * states (LF-only framing, one trailing CR dropped, invalid UTF-8 and bad JSON answered as
 * "parse", whitespace-only lines ignored, valid sub-protocol frames silent), so the counts
 * asserted are exact. Set PION_FUZZ_SEED to replay a run.
 */
import { describe, expect, test } from "bun:test";
import * as v from "valibot";
import { allCommandSchemas, commandSchema, isCommandType, SILENT_FRAMES } from "../../src/protocol/commands.ts";
import { LeanPion } from "../support/lean-pion.ts";
import { tempDirs, writeFakeModels } from "../support/pion.ts";

const SEED = Number(process.env.PION_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const MIN_RECORDS = 50_000;
const HUGE_LINE_BYTES = 50 * 1024 * 1024;
const BATCH_BYTES = 1024 * 1024;

/** Valid commands that only read or reset state: safe to let through the storm. */
const SAFE_VALID = new Set([
  "get_state",
  "get_messages",
  "get_available_models",
  "get_available_thinking_levels",
  "get_session_stats",
  "get_entries",
  "get_tree",
  "get_last_assistant_text",
  "get_commands",
  "get_capabilities",
  "get_fork_messages",
  "get_branch_messages",
  "abort",
  "abort_bash",
  "abort_retry",
]);

function mulberry32(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Kind = "silent" | "blank" | "parse" | "invalid" | "valid";
interface Expectation {
  kind: Kind;
  /** The string id the response must echo, when the record had one. */
  id?: string;
  type?: string;
}

const decoder = new TextDecoder("utf-8", { fatal: true });

/** What pion must answer for one line (bytes without the LF), per the wire contract. */
function classify(bytes: Uint8Array): Expectation {
  const end = bytes.length > 0 && bytes[bytes.length - 1] === 0x0d ? bytes.length - 1 : bytes.length;
  let text: string;
  try {
    text = decoder.decode(bytes.subarray(0, end));
  } catch {
    return { kind: "parse" };
  }
  if (text.trim() === "") return { kind: "blank" };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { kind: "parse" };
  }
  const rec = typeof json === "object" && json !== null && !Array.isArray(json) ? (json as Record<string, unknown>) : {};
  const id = typeof rec.id === "string" ? rec.id : undefined;
  const type = typeof rec.type === "string" ? rec.type : undefined;
  if (type === undefined || !isCommandType(type)) return { kind: "invalid", id, type };
  if (!v.safeParse(commandSchema(type), json).success) return { kind: "invalid", id, type };
  if (SILENT_FRAMES.has(type)) return { kind: "silent" };
  return { kind: "valid", id, type };
}

// biome-ignore lint: valibot schemas are walked structurally here
type AnySchema = any;

/** A value the schema accepts, for the fields around the one made wrong. */
function validValue(s: AnySchema): unknown {
  switch (s.type) {
    case "optional":
      return validValue(s.wrapped);
    case "string":
      return "x";
    case "number":
      return 1;
    case "boolean":
      return true;
    case "literal":
      return s.literal;
    case "picklist":
      return s.options[0];
    case "array":
      return [];
    case "record":
      return {};
    case "unknown":
      return null;
    case "union":
      return validValue(s.options[0]);
    case "object":
      return Object.fromEntries(Object.entries(s.entries).map(([k, e]) => [k, validValue(e)]));
    default:
      throw new Error(`framing fuzz: no valid value for schema type ${s.type}`);
  }
}

const WRONG_CANDIDATES: unknown[] = [0, 1.5, -7, true, false, null, "", "wrong", [], [1, "a"], {}, { k: "v" }, [[[]]], 1e308];

/** For every command and every field: records with that one field holding a value of the wrong type. */
function wrongTypeRecords(idFor: () => string): { rec: Record<string, unknown>; field: string; command: string }[] {
  const out: { rec: Record<string, unknown>; field: string; command: string }[] = [];
  for (const [command, schema] of Object.entries(allCommandSchemas()) as [string, AnySchema][]) {
    const base: Record<string, unknown> = {};
    for (const [k, e] of Object.entries(schema.entries) as [string, AnySchema][]) {
      if (e.type !== "optional") base[k] = validValue(e);
    }
    for (const [field, fieldSchema] of Object.entries(schema.entries) as [string, AnySchema][]) {
      const expected = fieldSchema.type === "optional" ? fieldSchema.wrapped.type : fieldSchema.type;
      for (const wrong of WRONG_CANDIDATES) {
        if (!isWrongType(expected, wrong)) continue;
        const rec: Record<string, unknown> = { ...base, id: idFor(), [field]: wrong };
        if (field === "type") rec.type = wrong;
        if (field === "id") rec.id = wrong;
        out.push({ rec, field, command });
      }
    }
  }
  return out;
}

function isWrongType(expected: string, value: unknown): boolean {
  const t = value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
  switch (expected) {
    case "string":
    case "picklist":
    case "literal":
      return t !== "string";
    case "number":
      return t !== "number";
    case "boolean":
      return t !== "boolean";
    case "array":
      return t !== "array";
    case "object":
    case "record":
      return t !== "object";
    default:
      throw new Error(`framing fuzz: unhandled field type ${expected}`);
  }
}

const enc = new TextEncoder();

function buildStorm(rand: () => number) {
  const int = (n: number) => Math.floor(rand() * n);
  const pick = <T>(xs: readonly T[]) => xs[int(xs.length)]!;
  let seq = 0;
  const nextId = () => `fz-${++seq}`;
  const lines: Uint8Array[] = [];
  const wrongIds = new Set<string>();

  const randomBytes = (len: number) => {
    const b = new Uint8Array(len);
    for (let i = 0; i < len; i++) {
      const x = int(256);
      b[i] = x === 0x0a ? 0x20 : x;
    }
    return b;
  };
  const safeCommand = (): Record<string, unknown> => {
    const type = pick([...SAFE_VALID]);
    const rec: Record<string, unknown> = { type, id: nextId() };
    if (type === "get_entries" && rand() < 0.5) rec.limit = 1 + int(5);
    return rec;
  };
  const mutate = (src: Uint8Array): Uint8Array => {
    const b = Array.from(src);
    const n = 1 + int(4);
    for (let i = 0; i < n; i++) {
      const at = int(b.length + 1);
      const op = int(4);
      const byte = pick([0x22, 0x7b, 0x7d, 0x5b, 0x5d, 0x3a, 0x2c, 0x5c, 0x00, 0x0d, 0xff, 0xc3, 0x80, 0x30 + int(10), 0x61 + int(26)]);
      if (op === 0) b.splice(at, 1);
      else if (op === 1) b.splice(at, 0, byte);
      else if (op === 2) b[Math.min(at, b.length - 1)] = byte;
      else b.splice(at, int(8));
    }
    return Uint8Array.from(b);
  };

  /** Adds a line unless it would be a valid command that starts real work. */
  const add = (line: Uint8Array) => {
    for (let i = 0; i < line.length; i++) if (line[i] === 0x0a) throw new Error("generated line contains LF");
    const c = classify(line);
    if (c.kind === "valid" && !SAFE_VALID.has(c.type!)) return;
    lines.push(line);
  };
  const addJson = (x: unknown, crlf = false) => add(enc.encode(JSON.stringify(x) + (crlf ? "\r" : "")));

  const deep = (levels: number, open: string, close: string) => open.repeat(levels) + close.repeat(levels);

  const wrongRecords = wrongTypeRecords(nextId);
  for (const w of wrongRecords) {
    if (typeof w.rec.id === "string") wrongIds.add(w.rec.id);
    addJson(w.rec);
  }

  /** A wrong-typed record under a new id, for mutations: `wrongIds` keeps naming unmutated records only. */
  const freshWrong = () => {
    const w = pick(wrongRecords);
    return w.field === "id" ? w.rec : { ...w.rec, id: nextId() };
  };

  const generators: (() => void)[] = [
    // random bytes, mostly invalid UTF-8
    () => add(randomBytes(1 + int(600))),
    // invalid UTF-8 inside otherwise valid JSON
    () => {
      const bad = pick([[0xff], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0x80], [0xe2, 0x82], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xfe, 0xfe]]);
      const json = enc.encode(JSON.stringify({ type: "get_state", id: nextId() }));
      const at = 10 + int(json.length - 12);
      add(Uint8Array.from([...json.subarray(0, at), ...bad, ...json.subarray(at)]));
    },
    // truncated JSON of real commands, wrong-typed or safe
    () => {
      const json = enc.encode(JSON.stringify(rand() < 0.5 ? freshWrong() : safeCommand()));
      add(json.subarray(0, 1 + int(json.length - 1)));
    },
    // byte mutations
    () => add(mutate(enc.encode(JSON.stringify(rand() < 0.5 ? freshWrong() : safeCommand())))),
    // wrong types again, with fresh ids and sometimes huge strings around
    () => {
      const w = pick(wrongRecords);
      const rec: Record<string, unknown> = { ...w.rec, ...(w.field !== "id" ? { id: nextId() } : {}) };
      if (rand() < 0.01) rec.pad = "h".repeat(256 * 1024 + int(1024 * 1024));
      if (typeof rec.id === "string") wrongIds.add(rec.id);
      addJson(rec);
    },
    // unknown types, non-objects, objects without a type
    () =>
      addJson(
        pick<unknown>([
          { type: `no_such_${int(1e6)}`, id: nextId() },
          { type: "", id: nextId() },
          { type: "GET_STATE", id: nextId() },
          { type: "__proto__", id: nextId() },
          { type: "constructor", id: nextId() },
          { type: "toString", id: nextId() },
          { id: nextId() },
          42,
          "get_state",
          null,
          true,
          [],
          [{ type: "get_state" }],
          { type: "get_state", id: 5 },
        ]),
      ),
    // valid, safe commands, some with CRLF
    () => addJson(safeCommand(), rand() < 0.5),
    // blank and whitespace-only lines
    () => add(enc.encode(pick(["", " ", "\t", "\r", "  \t \r", "\u00a0", "\u2028", "\ufeff", " \u3000 "]))),
    // odd but well-formed text
    () => add(enc.encode(pick(['{"type":"get_state"}\r{"x":1}', '\ufeff{"type":"get_state"}', "\u0000", '"\\ud800"', "{}", '{"type":"get_state",}', "NaN", "1e999999"]))),
    // sub-protocol frames with wrong shapes (answered) and valid shapes for unknown requests (silent)
    () =>
      addJson(
        pick<unknown>([
          { type: "extension_ui_response", id: `ui-${nextId()}`, value: "x" },
          { type: "extension_ui_response", id: nextId(), confirmed: "yes" },
          { type: "host_tool_result", id: `ht-${nextId()}`, result: { content: [{ type: "text", text: "r" }] } },
          { type: "host_tool_update", id: `ht-${nextId()}`, partialResult: { content: [] } },
          { type: "host_tool_result", id: nextId(), result: { content: "nope" } },
          { type: "host_tool_update", id: nextId() },
        ]),
      ),
  ];

  // deep nesting
  for (const levels of [10_000, 50_000]) {
    add(enc.encode(deep(levels, "[", "]")));
    add(enc.encode(deep(levels, '{"a":', "}")));
    add(enc.encode(`{"type":"prompt","id":"${nextId()}","message":${deep(levels, "[", "]")}}`));
    add(enc.encode(`{"type":"set_todos","id":"${nextId()}","phases":[${deep(levels, '{"a":', "}")}]}`));
    add(enc.encode("[".repeat(levels)));
  }
  // huge strings in otherwise small records
  for (let i = 0; i < 8; i++) {
    addJson({ type: "set_model", id: nextId(), provider: "p".repeat(2 * 1024 * 1024), modelId: i });
    addJson({ type: "get_state", id: nextId(), pad: "é".repeat(1024 * 1024) });
  }

  while (lines.length < MIN_RECORDS + 5_000) pick(generators)();
  for (let i = lines.length - 1; i > 0; i--) {
    const j = int(i + 1);
    [lines[i], lines[j]] = [lines[j]!, lines[i]!];
  }
  return { lines, wrongIds };
}

/** One 50 MB line: a valid get_state whose padding field is ignored. */
function hugeLine(id: string): Uint8Array {
  const head = enc.encode(`{"type":"get_state","id":"${id}","pad":"`);
  const tail = enc.encode('"}');
  const out = new Uint8Array(HUGE_LINE_BYTES);
  out.set(head, 0);
  out.fill(0x7a, head.length, HUGE_LINE_BYTES - tail.length);
  out.set(tail, HUGE_LINE_BYTES - tail.length);
  return out;
}

function* batches(lines: Uint8Array[], crlfAt: Set<number>): Generator<Uint8Array> {
  let parts: Uint8Array[] = [];
  let size = 0;
  const flush = () => {
    const out = new Uint8Array(size);
    let off = 0;
    for (const p of parts) {
      out.set(p, off);
      off += p.length;
    }
    parts = [];
    size = 0;
    return out;
  };
  for (const [i, line] of lines.entries()) {
    parts.push(line, crlfAt.has(i) ? CRLF : LF);
    size += line.length + (crlfAt.has(i) ? 2 : 1);
    if (size >= BATCH_BYTES) yield flush();
  }
  if (size > 0) yield flush();
}
const LF = Uint8Array.of(0x0a);
const CRLF = Uint8Array.of(0x0d, 0x0a);

describe("framing fuzz", () => {
  test(`${MIN_RECORDS}+ generated records into one process: one response per non-blank line (seed ${SEED})`, async () => {
    const rand = mulberry32(SEED);
    const { lines, wrongIds } = buildStorm(rand);
    const huge = hugeLine("huge-50mb");
    lines.splice(Math.floor(lines.length / 2), 0, huge);
    // A CR before the LF is dropped by the framing, so CRLF endings do not change what a line means;
    // lines already ending in CR are not given a second one.
    const crlfAt = new Set<number>();
    for (let i = 0; i < lines.length; i++) {
      const l = lines[i]!;
      if (rand() < 0.1 && l.length > 0 && l[l.length - 1] !== 0x0d) crlfAt.add(i);
    }

    const expected = lines.map(classify);
    const kinds = new Map<Kind, number>();
    for (const e of expected) kinds.set(e.kind, (kinds.get(e.kind) ?? 0) + 1);
    const answered = expected.filter((e) => e.kind !== "blank" && e.kind !== "silent");
    // per id: how many successes and failures it must get (mutated copies of a record share its id)
    const tally = (m: Map<string, string>, id: string, ok: boolean) => {
      const [s, f] = (m.get(id) ?? "0/0").split("/").map(Number) as [number, number];
      m.set(id, ok ? `${s + 1}/${f}` : `${s}/${f + 1}`);
    };
    const idCounts = new Map<string, string>();
    for (const e of answered) if (e.id !== undefined) tally(idCounts, e.id, e.kind === "valid");
    // the storm covers what the brief asks for
    expect(lines.length).toBeGreaterThanOrEqual(MIN_RECORDS);
    for (const k of ["silent", "blank", "parse", "invalid", "valid"] as const) expect(kinds.get(k) ?? 0).toBeGreaterThan(50);
    expect(wrongIds.size).toBeGreaterThan(1000);

    const fake = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("no model calls in this test", { status: 500 }) });
    const dirs = tempDirs();
    writeFakeModels(dirs.home, `http://127.0.0.1:${fake.port}`);
    const p = new LeanPion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model", "--no-session"] });
    try {
      for (const batch of batches(lines, crlfAt)) await p.writeAll(batch);
      const final = await p.request({ type: "get_state", id: "after-storm" }, 150_000);
      expect(final).toMatchObject({ type: "response", command: "get_state", success: true, data: { isStreaming: false } });
      expect(p.exitCode).toBeNull();
      expect(p.protocolError).toBeUndefined();

      const responses = p.records.filter((r) => r.type === "response" && r.id !== "after-storm");
      // every record on stdout so far is a response: nothing in the storm starts work
      const others = p.records.filter((r) => r.type !== "response");
      expect(others.map((r) => r.type)).toEqual([]);
      expect({ seed: SEED, responses: responses.length }).toEqual({ seed: SEED, responses: answered.length });
      expect(responses.filter((r) => r.command === "parse").length).toBe(kinds.get("parse") ?? 0);
      expect(responses.filter((r) => r.success === true).length).toBe(kinds.get("valid") ?? 0);
      const gotIds = new Map<string, string>();
      for (const r of responses) if (typeof r.id === "string") tally(gotIds, r.id, r.success === true);
      expect(gotIds).toEqual(idCounts);
      // every wrong-typed record was refused under its id (a mutated copy may rarely share an id and be valid)
      const accepted = [...wrongIds].filter((id) => !/^0\/[1-9]/.test(gotIds.get(id) ?? "") && !/^[1-9]\d*\/[1-9]/.test(idCounts.get(id) ?? ""));
      expect(accepted).toEqual([]);
      expect(responses.filter((r) => r.success === false && typeof r.error !== "string")).toEqual([]);
      expect(p.records.find((r) => r.id === "huge-50mb")).toMatchObject({ command: "get_state", success: true });
      expect(p.stderr).not.toMatch(/Unhandled|unhandledRejection|RangeError|Maximum call stack/);
      expect(await p.close()).toBe(0);
    } finally {
      p.kill();
      fake.stop(true);
    }
  }, 170_000);
});
