import { describe, expect, test } from "bun:test";
import { createCredentialGuard } from "../../../src/credentials/guard.ts";
import { maskPartial, toolMasker } from "../../../src/credentials/mask-tools.ts";
import type { Tool, ToolResult } from "../../../src/tools/tool.ts";

const KEY = "sk-unit-abcdefghijkl";
const guard = createCredentialGuard({ env: {}, credentials: () => [{ label: "UNIT_KEY", envNames: [], value: KEY }] });

describe("tool masking", () => {
  test("a partial result's text blocks hold back a possible key beginning; details are masked but not cut", () => {
    const partial: ToolResult = {
      content: [{ type: "text", text: "token: sk-unit-abc" }, { type: "image", data: "sk", mimeType: "image/png" }],
      details: { truncatedBy: "lines", path: "/tmp/s", echo: KEY },
    };
    expect(maskPartial(guard, partial)).toEqual({
      content: [{ type: "text", text: "token: " }, { type: "image", data: "sk", mimeType: "image/png" }],
      details: { truncatedBy: "lines", path: "/tmp/s", echo: "[redacted: UNIT_KEY]" },
    });
    const clean: ToolResult = { content: [{ type: "text", text: "fine" }] };
    expect(maskPartial(guard, clean).content[0]).toBe(clean.content[0]!);
  });

  test("a tool printing a key in two pieces: no update shows the first, the result is masked", async () => {
    const tool: Tool<unknown> = {
      name: "t",
      label: "t",
      description: "",
      parameters: {},
      parse: async (a) => a,
      async execute(_args, ctx) {
        ctx.onUpdate?.({ content: [{ type: "text", text: `out ${KEY.slice(0, 10)}` }] });
        ctx.onUpdate?.({ content: [{ type: "text", text: `out ${KEY} more` }] });
        return { content: [{ type: "text", text: `out ${KEY}` }] };
      },
    };
    const masked = toolMasker(guard)(new Map([["t", tool]])).get("t")!;
    const updates: ToolResult[] = [];
    const result = await masked.execute({}, { signal: new AbortController().signal, callId: "c", cwd: "/", onUpdate: (p) => void updates.push(p) });
    expect(updates.map((u) => u.content)).toEqual([[{ type: "text", text: "out " }], [{ type: "text", text: "out [redacted: UNIT_KEY] more" }]]);
    expect(result.content).toEqual([{ type: "text", text: "out [redacted: UNIT_KEY]" }]);
  });
});
