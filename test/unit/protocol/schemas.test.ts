import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { COMMAND_TYPES, SILENT_FRAMES } from "../../../src/protocol/commands.ts";
import { generatedFiles, REPO_ROOT } from "../../../src/protocol/gen-schemas.ts";
import { REQUEST_TYPES, RESULT_SCHEMAS } from "../../../src/protocol/results.ts";
import { recordProblems } from "../../support/wire-check.ts";

const usage = { input: 1, output: 2, cacheRead: 0, cacheWrite: 0, totalTokens: 3, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

describe("published schemas", () => {
  test("schemas/ and docs/protocol.md are what the code generates (run `bun run schemas` when this fails)", () => {
    const files = generatedFiles();
    const stale: string[] = [];
    for (const [path, text] of files) {
      const target = join(REPO_ROOT, path);
      if (!existsSync(target) || readFileSync(target, "utf8") !== text) stale.push(path);
    }
    for (const name of readdirSync(join(REPO_ROOT, "schemas/commands"))) {
      if (!files.has(`schemas/commands/${name}`)) stale.push(`schemas/commands/${name} (no longer generated)`);
    }
    if (stale.length > 0) throw new Error(`out of date, run \`bun run schemas\`: ${stale.join(", ")}`);
  });

  test("every command that gets a response has a result schema", () => {
    const answered = COMMAND_TYPES.filter((t) => !SILENT_FRAMES.has(t));
    expect<string[]>([...REQUEST_TYPES].sort()).toEqual(answered.sort());
    expect(Object.keys(RESULT_SCHEMAS).sort()).toEqual(answered.sort());
  });
});

describe("wire check", () => {
  test("a conforming record passes both the valibot schemas and the JSON Schema files", () => {
    expect(recordProblems({ type: "agent_settled", aborted: false, usage, cost: 0 })).toEqual([]);
    expect(recordProblems({ id: "1", type: "response", command: "get_last_assistant_text", success: true, data: { text: null } })).toEqual([]);
    expect(recordProblems({ type: "response", command: "parse", success: false, error: "Failed to parse command: x" })).toEqual([]);
    expect(recordProblems({ type: "extension_ui_request", id: "u", method: "select", title: "t", options: ["a"] })).toEqual([]);
  });

  test("an undocumented field, a wrong type, a missing field or an unknown type is reported by both", () => {
    const extra = recordProblems({ type: "agent_settled", aborted: false, usage, cost: 0, surprise: 1 });
    expect(extra.length).toBe(2);
    expect(extra[1]).toContain("surprise");
    expect(recordProblems({ type: "turn_start", x: 1 }).length).toBe(2);
    expect(recordProblems({ type: "prompt_result", id: "1", stopReason: "done", aborted: false, usage, cost: 0 }).length).toBe(2);
    expect(recordProblems({ id: "1", type: "response", command: "abort", success: true, data: {} }).length).toBe(2);
    expect(recordProblems({ type: "message_end", message: { role: "user", content: "hi", timestamp: 1 } }).length).toBe(2);
    expect(recordProblems({ type: "extension_ui_request", id: "u", method: "select", title: "t" }).length).toBe(2);
    expect(recordProblems({ type: "brand_new" })).toEqual(['unknown record type "brand_new"']);
  });

  test("messages and entries are open: extra fields pass, documented ones are checked", () => {
    const message = { role: "user", content: "hi", timestamp: 1, extra: true };
    expect(recordProblems({ type: "message_end", message, entryId: "abcd1234" })).toEqual([]);
    expect(recordProblems({ type: "message_end", message: { ...message, timestamp: "now" }, entryId: "abcd1234" }).length).toBe(2);
  });
});
