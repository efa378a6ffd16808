import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { startFakeProvider } from "../support/fake-provider.ts";
import { Pion, tempDirs, writeFakeModels, type Rec } from "../support/pion.ts";
import { NO_REFERENCE, referenceRpc, type RpcAgent } from "../support/reference-rpc.ts";
import { describeWith } from "../support/requires.ts";

/**
 * Without --tools every built-in tool is registered and those not selected are inactive, as in the
 * reference: pi.getAllTools() lists grep, find and ls beside the default four, and
 * pi.setActiveTools can turn one on for the next model call. With --tools only those are there.
 */
const EXT = join(import.meta.dir, "../fixtures/extensions/all-tools.ts");
const REFERENCE_ONLY = new Set(["powershell", "codemode", "tool_search"]);

async function report(agent: RpcAgent): Promise<{ all: string[]; active: string[] }> {
  const from = agent.records.length;
  await agent.request({ type: "prompt", message: "/tools-report" });
  const n = await agent.waitFor((r) => r.type === "extension_ui_request" && r.method === "notify", from);
  const got = JSON.parse(String(n.message)) as { all: string[]; active: string[] };
  return { all: got.all.filter((t) => !REFERENCE_ONLY.has(t)), active: got.active };
}

const toolNames = (body: unknown): string[] => ((body as { tools?: { name: string }[] }).tools ?? []).map((t) => t.name);

describe("the built-in tools an extension sees", () => {
  test.concurrent("without --tools: all seven registered, the default four active; setActiveTools turns grep on for the next call", async () => {
    await using fake = startFakeProvider();
    const dirs = tempDirs();
    writeFakeModels(dirs.home, fake.url);
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model", "-e", EXT] });
    expect(await report(p)).toEqual({ all: ["read", "bash", "edit", "write", "grep", "find", "ls"], active: ["read", "bash", "edit", "write"] });
    await p.request({ type: "prompt", message: "/act read,grep" });
    expect((await report(p)).active.sort()).toEqual(["grep", "read"]);
    await p.request({ type: "prompt", message: "go" });
    await p.waitFor("agent_settled");
    expect(toolNames(fake.requests[0]!.body).sort()).toEqual(["grep", "read"]);
    await p.close();
  });

  test.concurrent("--tools read: only read is there", async () => {
    await using fake = startFakeProvider();
    const dirs = tempDirs();
    writeFakeModels(dirs.home, fake.url);
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model", "--tools", "read", "-e", EXT] });
    expect(await report(p)).toEqual({ all: ["read"], active: ["read"] });
    await p.close();
  });
});

describeWith("the built-in tools an extension sees, pion against the reference", NO_REFERENCE, () => {
  for (const args of [[], ["--tools", "read,grep"]]) {
    test(`the same registered and active tools (${args.join(" ") || "no flags"}), and after setActiveTools`, async () => {
      const run = async (which: "pion" | "reference") => {
        await using fake = startFakeProvider();
        const dirs = tempDirs();
        writeFakeModels(dirs.home, fake.url);
        const agent: RpcAgent = which === "pion" ? new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model", ...args, "-e", EXT] }) : referenceRpc(["--mode", "rpc", "--provider", "fake", "--model", "fake-model", ...args, "-e", EXT], dirs, {});
        try {
          const before = await report(agent);
          await agent.request({ type: "prompt", message: "/act read,ls" });
          const after = await report(agent);
          return { before, after: after.active.sort() } as Rec;
        } finally {
          await agent.close();
        }
      };
      const [mine, theirs] = await Promise.all([run("pion"), run("reference")]);
      expect(mine).toEqual(theirs);
    }, 60_000);
  }
});
