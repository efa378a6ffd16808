import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeProvider } from "../support/fake-provider.ts";
import { Pion, tempDirs, writeFakeModels } from "../support/pion.ts";

type Block = { type: string; cache_control?: unknown };
type Body = { system?: Block[]; tools?: Block[]; messages: { role: string; content: string | Block[] }[] };

const marked = (b: Block | undefined) => JSON.stringify(b?.cache_control) === '{"type":"ephemeral"}';

test.concurrent("Anthropic: every request of a tool loop puts a cache breakpoint on the end of the conversation, within four", async () => {
  const fake = startFakeProvider();
  const dirs = tempDirs();
  writeFakeModels(dirs.home, fake.url);
  for (let i = 0; i < 3; i++) writeFileSync(join(dirs.cwd, `f${i}.txt`), `file ${i}\n`);
  for (let i = 0; i < 3; i++) fake.enqueue({ blocks: [{ type: "toolCall", id: `r${i}`, name: "read", arguments: { path: `f${i}.txt` } }] });
  fake.enqueue({ blocks: [{ type: "text", text: "read them all" }] });
  const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model"] });
  await p.request({ type: "prompt", message: "read the files one by one" });
  await p.waitFor("agent_settled");
  expect(fake.requests.length).toBe(4);
  for (const req of fake.requests) {
    const body = req.body as Body;
    const last = body.messages.at(-1)!;
    expect(last.role).toBe("user");
    expect(Array.isArray(last.content)).toBe(true);
    expect(marked((last.content as Block[]).at(-1))).toBe(true);
    expect(marked(body.system?.at(-1))).toBe(true);
    expect(marked(body.tools?.at(-1))).toBe(true);
    const count = JSON.stringify(body).split('"cache_control"').length - 1;
    expect(count).toBe(3);
  }
  // the breakpoint moves: the previous request's end is no longer marked, the new end is
  const third = fake.requests[2]!.body as Body;
  expect((third.messages.at(-1)!.content as Block[]).at(-1)!.type).toBe("tool_result");
  await p.close();
  await fake.stop();
});
