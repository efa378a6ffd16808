import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { createBuiltinTools } from "../../src/tools/index.ts";
import { startFakeProvider, type FakeReply } from "../support/fake-provider.ts";
import { Pion, tempDirs, writeFakeModels, type Rec } from "../support/pion.ts";

const FACTORIES = resolve(import.meta.dir, "../fixtures/extensions/factories.ts");

/** A folder with a few files; called twice for the folder pion works in and its twin the built-ins run in. */
function seed(dir: string): string {
  mkdirSync(join(dir, "sub"), { recursive: true });
  writeFileSync(join(dir, "a.txt"), "alpha\nbeta\n");
  writeFileSync(join(dir, "sub", "b.md"), "# notes\nalpha again\n");
  return dir;
}

type Call = { name: string; arguments: Record<string, unknown> };

const CALLS: Call[] = [
  { name: "read", arguments: { path: "a.txt" } },
  { name: "write", arguments: { path: "new/c.txt", content: "gamma" } },
  { name: "edit", arguments: { path: "a.txt", edits: [{ oldText: "beta", newText: "BETA" }] } },
  // The older single-replacement form still works through the factory's tool.
  { name: "edit", arguments: { path: "a.txt", oldText: "alpha", newText: "ALPHA" } },
  { name: "read", arguments: { path: "a.txt" } },
  { name: "bash", arguments: { command: "pwd; cat new/c.txt; exit 3" } },
  { name: "find", arguments: { pattern: "*.md" } },
  { name: "ls", arguments: {} },
  { name: "read", arguments: { path: "missing.txt" } },
];

/** One model reply per call (so they run in order), then a closing text. */
const replies = (calls: Call[]): FakeReply[] => [
  ...calls.map((c, i): FakeReply => ({ blocks: [{ type: "toolCall", id: `t${i}`, name: c.name, arguments: c.arguments }] })),
  { blocks: [{ type: "text", text: "done" }] },
];

async function runCalls(env: Record<string, string>, calls: Call[], cwdSeed = false) {
  const fake = startFakeProvider({ replies: replies(calls) });
  const dirs = tempDirs();
  writeFakeModels(dirs.home, fake.url);
  if (cwdSeed) seed(dirs.cwd);
  const p = new Pion({ ...dirs, env, args: ["--mode", "rpc", "--model", "fake/fake-model", "-e", FACTORIES] });
  await p.request({ type: "prompt", message: "use the tools" });
  await p.waitFor("agent_settled");
  const results = p.records.filter((r) => r.type === "message_end" && r.message.role === "toolResult").map((r) => r.message as Rec);
  const first = fake.requests[0]!.body as { tools: { name: string; description: string; input_schema: unknown }[] };
  const last = fake.requests.at(-1)!.body as { messages: { role: string; content: Rec[] }[] };
  expect(await p.close()).toBe(0);
  await fake.stop();
  return { results, tools: first.tools, lastMessages: last.messages, dirs };
}

/** What pion's own built-in tools answer for the same calls, run in `dir`. */
async function builtinResults(dir: string, calls: Call[]) {
  const tools = createBuiltinTools({ images: true });
  const out: { content: unknown; details: unknown; isError: boolean }[] = [];
  for (const [i, c] of calls.entries()) {
    const tool = tools.get(c.name)!;
    try {
      const r = await tool.execute(await tool.parse(c.arguments), { signal: new AbortController().signal, callId: `t${i}`, cwd: dir });
      out.push({ content: r.content, details: r.details ?? {}, isError: r.isError === true });
    } catch (err) {
      out.push({ content: [{ type: "text", text: (err as Error).message }], details: {}, isError: true });
    }
  }
  return out;
}

const shape = (r: Rec) => ({ content: r.content, details: r.details ?? {}, isError: r.isError });

describe("the reference's tool factories, through an extension", () => {
  test.concurrent("tools pinned to another folder: the built-ins' names, schemas and results", async () => {
    const root = tempDirs();
    const remote = seed(join(root.cwd, "remote"));
    const twin = seed(join(root.cwd, "twin"));
    const { results, tools } = await runCalls({ FACTORY_MODE: "folder", FACTORY_DIR: remote }, CALLS);

    const builtin = createBuiltinTools({ images: true });
    for (const name of ["read", "bash", "edit", "write", "grep", "find", "ls"]) {
      const sent = tools.find((t) => t.name === name);
      expect(sent).toEqual({ name, description: builtin.get(name)!.description, input_schema: builtin.get(name)!.parameters, ...(sent && "cache_control" in sent ? { cache_control: { type: "ephemeral" } } : {}) });
    }
    const expected = await builtinResults(twin, CALLS);
    expect(results.map(shape)).toEqual(expected.map((e) => JSON.parse(JSON.stringify(e).replaceAll(twin, remote))));
    // The ones that say where they ran, spelled out.
    expect(results[5]!.content[0].text).toBe(`${remote}\ngamma\n\nCommand exited with code 3`);
    expect(results[4]!.content[0].text).toBe("ALPHA\nBETA");
    expect(readFileSync(join(remote, "new/c.txt"), "utf8")).toBe("gamma");
    expect(results[8]).toMatchObject({ isError: true, content: [{ type: "text", text: "File not found: missing.txt" }] });
  });

  test.concurrent("tools whose operations reach another machine: the cwd's paths, files elsewhere", async () => {
    const root = tempDirs();
    const remote = seed(join(root.cwd, "remote"));
    const twin = seed(join(root.cwd, "twin"));
    const calls = [...CALLS, { name: "grep", arguments: { pattern: "alpha", path: "nowhere" } }];
    const { results, dirs, lastMessages } = await runCalls({ FACTORY_MODE: "elsewhere", FACTORY_DIR: remote }, calls);

    // Nothing was written where pion runs; everything happened in the "remote" folder.
    expect(existsSync(join(dirs.cwd, "new"))).toBe(false);
    expect(readFileSync(join(remote, "a.txt"), "utf8")).toBe("ALPHA\nBETA\n");
    const expected = await builtinResults(twin, CALLS);
    expect(results.slice(0, CALLS.length).map(shape)).toEqual(expected.map((e) => JSON.parse(JSON.stringify(e).replaceAll(twin, remote))));
    // grep's operations decide whether a path is a folder; their failure reaches the model.
    expect(results.at(-1)).toMatchObject({ isError: true, content: [{ type: "text", text: expect.stringContaining("no such remote path") }] });
    // And the model got the same results in its next request.
    const sent = lastMessages.flatMap((m) => m.content).filter((b) => b.type === "tool_result");
    expect(sent.map((b) => b.content[0].text)).toEqual(results.map((r) => r.content[0].text));
  });

  test.concurrent("grep through its factory searches the given folder like the built-in", async () => {
    const root = tempDirs();
    const remote = seed(join(root.cwd, "remote"));
    const calls = [{ name: "grep", arguments: { pattern: "alpha" } }];
    const { results } = await runCalls({ FACTORY_MODE: "folder", FACTORY_DIR: remote }, calls);
    expect(results.map(shape)).toEqual(await builtinResults(remote, calls));
    expect(results[0]!.content[0].text).toBe("a.txt:1: alpha\nsub/b.md:2: alpha again");
  });

  test.concurrent("bash with a command prefix and a spawn hook; the hook's environment has no credentials", async () => {
    const root = tempDirs();
    const elsewhere = seed(join(root.cwd, "elsewhere"));
    const calls = [{ name: "bash", arguments: { command: 'echo "$FROM_PREFIX $FROM_HOOK ${ANTHROPIC_API_KEY:-no-key}"; pwd' } }];
    const { results } = await runCalls({ FACTORY_MODE: "hook", FACTORY_DIR: elsewhere, ANTHROPIC_API_KEY: "sk-ant-should-not-leak-1234" }, calls);
    expect(results[0]).toMatchObject({ isError: false, content: [{ type: "text", text: `prefixed hooked no-key\n${elsewhere}\n` }] });
  });
});
