import { describe, expect, test } from "bun:test";
import { resolve } from "node:path";
import { startFakeProvider } from "../support/fake-provider.ts";
import { Pion, tempDirs, writeFakeModels, type Rec } from "../support/pion.ts";

const FIXTURE = resolve(import.meta.dir, "../fixtures/extensions/loose-arguments.ts");

describe("an extension tool called with loose arguments", () => {
  test.concurrent('runs with 42 for "42", as the reference coerces it; what cannot be coerced is refused', async () => {
    const fake = startFakeProvider({
      replies: [
        { blocks: [{ type: "toolCall", id: "t1", name: "double", arguments: { value: "42", tags: "one" } }] },
        { blocks: [{ type: "toolCall", id: "t2", name: "double", arguments: { value: "many" } }] },
        { blocks: [{ type: "text", text: "done" }] },
      ],
    });
    const dirs = tempDirs();
    writeFakeModels(dirs.home, fake.url);
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model", "-e", FIXTURE] });
    await p.request({ type: "prompt", message: "double it" });
    await p.waitFor("agent_settled");
    const results = p.records.filter((r) => r.type === "message_end" && r.message.role === "toolResult").map((r) => r.message as Rec);
    const calls = p.records.filter((r) => r.type === "message_end" && r.message.role === "assistant").flatMap((r) => (r.message as Rec).content as Rec[]);
    expect(await p.close()).toBe(0);
    await fake.stop();
    expect(results[0]).toMatchObject({ toolName: "double", isError: false, content: [{ type: "text", text: "number 84" }], details: { value: 42, tags: ["one"] } });
    expect(results[1]).toMatchObject({ toolName: "double", isError: true });
    expect((results[1]!.content as Rec[])[0]!.text).toContain("value: expected number, got string");
    // The transcript keeps what the model sent.
    expect(calls.find((c) => c.id === "t1")).toMatchObject({ arguments: { value: "42", tags: "one" } });
  });
});
