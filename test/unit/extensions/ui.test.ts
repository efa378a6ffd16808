import { describe, expect, test } from "bun:test";
import { loadExtensions } from "../../../src/extensions/loader.ts";
import { fakePort, fixture } from "./fake-port.ts";

async function load(opts: Parameters<typeof fakePort>[0] = {}) {
  const fake = fakePort(opts);
  const runner = await loadExtensions([fixture("ui.ts")], fake.port);
  return { ...fake, runner };
}

const isRequest = (f: Record<string, unknown>) => f.type === "extension_ui_request";

describe("dialogs", () => {
  test("select: the request has the spec's shape and resolves to the chosen value", async () => {
    const { runner, nextFrame, entry } = await load();
    const request = nextFrame(isRequest);
    const done = runner.runCommand("/dialog select 60000");
    const frame = await request;
    expect(frame).toEqual({ type: "extension_ui_request", id: expect.any(String), method: "select", title: "Pick one", options: ["Allow", "Block"], timeout: 60000 });
    runner.handleUiResponse({ id: String(frame.id), value: "Allow" });
    expect(await done).toBe(true);
    expect(entry("dialog")).toEqual([{ method: "select", result: "Allow" }]);
  });

  test("confirm: confirmed true/false; cancelled is false", async () => {
    const { runner, nextFrame, entry } = await load();
    for (const response of [{ confirmed: true }, { confirmed: false }, { cancelled: true }]) {
      const request = nextFrame(isRequest);
      const done = runner.runCommand("/dialog confirm");
      const frame = await request;
      expect(frame).toEqual({ type: "extension_ui_request", id: expect.any(String), method: "confirm", title: "Clear session?", message: "All messages will be lost." });
      runner.handleUiResponse({ id: String(frame.id), ...response });
      await done;
    }
    expect(entry("dialog").map((d) => (d as { result: unknown }).result)).toEqual([true, false, false]);
  });

  test("input and editor: value, or undefined when cancelled", async () => {
    const { runner, nextFrame, entry } = await load();
    let request = nextFrame(isRequest);
    let done = runner.runCommand("/dialog input");
    let frame = await request;
    expect(frame).toEqual({ type: "extension_ui_request", id: expect.any(String), method: "input", title: "Enter a value", placeholder: "type something..." });
    runner.handleUiResponse({ id: String(frame.id), value: "typed" });
    await done;

    request = nextFrame(isRequest);
    done = runner.runCommand("/dialog editor");
    frame = await request;
    expect(frame).toEqual({ type: "extension_ui_request", id: expect.any(String), method: "editor", title: "Edit some text", prefill: "Line 1\nLine 2" });
    runner.handleUiResponse({ id: String(frame.id), cancelled: true });
    await done;
    expect(entry("dialog")).toEqual([
      { method: "input", result: "typed" },
      { method: "editor", result: "undefined" },
    ]);
  });

  test("a timed-out dialog resolves to its default and a late answer is ignored", async () => {
    const { runner, nextFrame, entry } = await load();
    const selectReq = nextFrame(isRequest);
    await runner.runCommand("/dialog select 5");
    const confirmReq = nextFrame(isRequest);
    await runner.runCommand("/dialog confirm 5");
    const inputReq = nextFrame(isRequest);
    await runner.runCommand("/dialog input 5");
    expect(entry("dialog")).toEqual([
      { method: "select", result: "undefined" },
      { method: "confirm", result: false },
      { method: "input", result: "undefined" },
    ]);
    expect((await selectReq).timeout).toBe(5);
    expect((await confirmReq).timeout).toBe(5);
    expect((await inputReq).timeout).toBe(5);
    runner.handleUiResponse({ id: String((await selectReq).id), value: "Allow" }); // too late: no effect, no throw
    expect(entry("dialog")).toHaveLength(3);
  });

  test("an unknown id is ignored and the pending dialog still waits for its own id", async () => {
    const { runner, nextFrame, entry } = await load();
    const request = nextFrame(isRequest);
    const done = runner.runCommand("/dialog select");
    const frame = await request;
    runner.handleUiResponse({ id: "not-a-request", value: "Block" });
    expect(entry("dialog")).toEqual([]);
    runner.handleUiResponse({ id: String(frame.id), value: "Block" });
    await done;
    expect(entry("dialog")).toEqual([{ method: "select", result: "Block" }]);
  });

  test("each request gets its own id", async () => {
    const { runner, frames } = await load();
    await runner.runCommand("/fire");
    const ids = frames.filter(isRequest).map((f) => f.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  test("without a UI (json/print) dialogs return their defaults at once and nothing is written", async () => {
    const { runner, frames, entry } = await load({ mode: "print", hasUI: false });
    await runner.runCommand("/dialog select");
    await runner.runCommand("/dialog confirm");
    await runner.runCommand("/fire");
    expect(entry("dialog")).toEqual([
      { method: "select", result: "undefined" },
      { method: "confirm", result: false },
    ]);
    expect(frames).toEqual([]);
  });
});

describe("fire-and-forget", () => {
  test("frames have exactly the spec's fields; component widgets are dropped; degraded methods return defaults", async () => {
    const { runner, frames, entry } = await load();
    await runner.runCommand("/fire");
    const shapes = frames.map(({ id, ...rest }) => {
      expect(typeof id).toBe("string");
      return rest;
    });
    const req = { type: "extension_ui_request" };
    expect(shapes).toEqual([
      { ...req, method: "notify", message: "Command blocked by user", notifyType: "warning" },
      { ...req, method: "notify", message: "plain" },
      { ...req, method: "setStatus", statusKey: "my-ext", statusText: "Turn 3 running..." },
      { ...req, method: "setStatus", statusKey: "my-ext" },
      { ...req, method: "setWidget", widgetKey: "my-ext", widgetLines: ["--- My Widget ---", "Line 1"], widgetPlacement: "belowEditor" },
      { ...req, method: "setWidget", widgetKey: "my-ext" },
      { ...req, method: "setTitle", title: "pi - my project" },
      { ...req, method: "set_editor_text", text: "prefilled text" },
      { ...req, method: "set_editor_text", text: "pasted" },
    ]);
    expect(entry("degraded")).toEqual([
      {
        custom: true,
        editorText: "",
        toolsExpanded: false,
        themes: [],
        theme: true,
        setTheme: { success: false, error: "Theme switching not supported in RPC mode" },
      },
    ]);
  });
});
