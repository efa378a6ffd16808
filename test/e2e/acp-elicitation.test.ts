import { describe, expect, setDefaultTimeout, test } from "bun:test";
import type * as acp from "@agentclientprotocol/sdk";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { setupAcp, type AcpClientOptions, type AcpTestClient } from "../support/acp-client.ts";
import type { FakeProvider } from "../support/fake-provider.ts";
import { tempDirs } from "../support/pion.ts";

setDefaultTimeout(60_000);

/** A tool that opens the dialog its argument names and answers what came back. */
const EXTENSION = `
export default function (pi) {
  pi.registerTool({
    name: "ask",
    description: "Open a dialog",
    parameters: { type: "object", properties: { method: { type: "string" } }, required: ["method"] },
    async execute(_id, params, _signal, _onUpdate, ctx) {
      const m = params.method;
      let r;
      if (m === "select") r = await ctx.ui.select("Pick one", ["Allow", "Block"]);
      else if (m === "confirm") r = await ctx.ui.confirm("Clear session?", "All messages will be lost.");
      else if (m === "input") r = await ctx.ui.input("Enter a value", "type something...");
      else if (m === "editor") r = await ctx.ui.editor("Edit some text", "Line 1\\nLine 2");
      else if (m === "timeout") r = await ctx.ui.select("Too slow", ["a", "b"], { timeout: 300 });
      return { content: [{ type: "text", text: JSON.stringify({ hasUI: ctx.hasUI, result: r === undefined ? "undefined" : r }) }] };
    },
  });
}
`;

const METHODS = ["select", "confirm", "input", "editor"] as const;

function setup(o: Partial<AcpClientOptions> = {}) {
  const ext = join(tempDirs().cwd, "ask.js");
  writeFileSync(ext, EXTENSION);
  return setupAcp({ args: ["-e", ext], ...o });
}

/** Prompts once: the model calls `ask` for each method at once; answers each call's result by method. */
async function askAll(c: AcpTestClient, fake: FakeProvider, cwd: string, methods: readonly string[], caps: acp.ClientCapabilities) {
  await c.agent.request("initialize", { protocolVersion: 1, clientCapabilities: caps });
  const s = await c.agent.request("session/new", { cwd, mcpServers: [] });
  fake.enqueue({ blocks: methods.map((m) => ({ type: "toolCall" as const, id: m, name: "ask", arguments: { method: m } })) });
  fake.enqueue({ blocks: [{ type: "text", text: "done" }] });
  expect((await c.agent.request("session/prompt", { sessionId: s.sessionId, prompt: [{ type: "text", text: "ask" }] })).stopReason).toBe("end_turn");
  const ends = (c.updates.get(s.sessionId) as acp.ToolCallUpdate[]).filter((u) => u.status === "completed");
  const out: Record<string, { hasUI: boolean; result: unknown }> = {};
  for (const m of methods) {
    const end = ends.find((u) => u.toolCallId === m);
    const text = (end?.content?.[0] as { content: { text: string } } | undefined)?.content.text;
    out[m] = JSON.parse(text ?? "null");
  }
  return { sessionId: s.sessionId, out };
}

/** Which dialog a request is: its one property's title. */
const titleOf = (req: acp.CreateElicitationRequest) => {
  const props = (req as acp.ElicitationFormMode).requestedSchema.properties!;
  return (props.value as { title: string }).title;
};

const FORM = { elicitation: { form: {} } } satisfies acp.ClientCapabilities;

describe("ACP extension dialogs", () => {
  test.concurrent("select, confirm, input and editor are form elicitations; accepted values are the answers", async () => {
    const answers: Record<string, acp.ElicitationContentValue> = { "Pick one": "Block", "Clear session?": true, "Enter a value": "typed", "Edit some text": "new\ntext" };
    const { fake, dirs, c } = setup({ elicitation: (req) => ({ action: "accept", content: { value: answers[titleOf(req)]! } }) });
    const { sessionId, out } = await askAll(c, fake, dirs.cwd, METHODS, FORM);
    expect(out).toEqual({
      select: { hasUI: true, result: "Block" },
      confirm: { hasUI: true, result: true },
      input: { hasUI: true, result: "typed" },
      editor: { hasUI: true, result: "new\ntext" },
    });
    const byTitle = Object.fromEntries(c.elicitationRequests.map((r) => [titleOf(r), r]));
    const form = (value: Record<string, unknown>, message: string) => ({
      mode: "form",
      sessionId,
      message,
      requestedSchema: { type: "object", properties: { value }, required: ["value"] },
    });
    expect(byTitle).toEqual({
      "Pick one": form({ type: "string", title: "Pick one", enum: ["Allow", "Block"] }, "Pick one"),
      "Clear session?": form({ type: "boolean", title: "Clear session?", description: "All messages will be lost.", default: false }, "Clear session?"),
      "Enter a value": form({ type: "string", title: "Enter a value", description: "type something..." }, "Enter a value"),
      "Edit some text": form({ type: "string", title: "Edit some text", default: "Line 1\nLine 2" }, "Edit some text"),
    });
    await c.close();
    await fake.stop();
  });

  test.concurrent("decline, cancel, an answer outside the options and a timed-out dialog are dismissed dialogs", async () => {
    const { fake, dirs, c } = setup({
      elicitation: (req) => {
        const t = titleOf(req);
        if (t === "Too slow") return new Promise(() => {}); // never answered: the dialog's timeout passes
        if (t === "Pick one") return { action: "accept", content: { value: "Maybe" } };
        return { action: t === "Clear session?" ? "decline" : "cancel" };
      },
    });
    const { out } = await askAll(c, fake, dirs.cwd, [...METHODS, "timeout"], FORM);
    expect(out).toEqual({
      select: { hasUI: true, result: "undefined" },
      confirm: { hasUI: true, result: false },
      input: { hasUI: true, result: "undefined" },
      editor: { hasUI: true, result: "undefined" },
      timeout: { hasUI: true, result: "undefined" },
    });
    expect(c.elicitationRequests.map(titleOf).sort()).toEqual(["Clear session?", "Edit some text", "Enter a value", "Pick one", "Too slow"]);
    await c.close();
    await fake.stop();
  });

  test.concurrent("an editor without form elicitation is never asked: dialogs answer their defaults, ctx.hasUI is false", async () => {
    const { fake, dirs, c } = setup({ elicitation: () => ({ action: "accept", content: { value: "Block" } }) });
    const { out } = await askAll(c, fake, dirs.cwd, METHODS, { elicitation: { url: {} } });
    expect(out).toEqual({
      select: { hasUI: false, result: "undefined" },
      confirm: { hasUI: false, result: false },
      input: { hasUI: false, result: "undefined" },
      editor: { hasUI: false, result: "undefined" },
    });
    expect(c.elicitationRequests).toEqual([]);
    await c.close();
    await fake.stop();
  });
});
