import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeProvider } from "../support/fake-provider.ts";
import { runPion, tempDirs, writeFakeModels } from "../support/pion.ts";

/**
 * `--offline` is the reference's "disable automatic network activity": pion starts none of its
 * own, and passes the switch on as PI_OFFLINE=1 to extensions and the processes it starts (the
 * reference's extensions check it), as the reference does. Model requests still go.
 */

/** An extension whose tool description says what PI_OFFLINE it saw when it loaded. */
const PROBE = `export default function (pi) {
  pi.registerTool({
    name: "probe",
    description: "extension saw offline=[" + (process.env.PI_OFFLINE ?? "") + "]",
    parameters: { type: "object", properties: {}, additionalProperties: false },
    async execute() { return { content: [{ type: "text", text: "probed" }] }; },
  });
}
`;

/** The tool description the extension wrote, and what the bash tool printed, as the second request carries them. */
async function seen(args: string[], env: Record<string, string>) {
  await using fake = startFakeProvider();
  const dirs = tempDirs();
  writeFakeModels(dirs.home, fake.url);
  const ext = join(dirs.home, "probe.ts");
  writeFileSync(ext, PROBE);
  fake.enqueue(
    { blocks: [{ type: "toolCall", id: "t1", name: "bash", arguments: { command: 'echo "bash saw offline=[$PI_OFFLINE]"' } }] },
    { blocks: [{ type: "text", text: "done" }] },
  );
  const r = await runPion(["--mode", "json", "--model", "fake/fake-model", "-e", ext, ...args, "check"], { ...dirs, env });
  expect(r.code).toBe(0);
  expect(fake.requests.length).toBe(2);
  const body = JSON.stringify(fake.requests[1]!.body);
  return { extension: /extension saw offline=\[(\w*)\]/.exec(body)?.[1], bash: /bash saw offline=\[(\w*)\]/.exec(body)?.[1] };
}

describe("--offline", () => {
  test.concurrent("extensions and the commands pion runs see PI_OFFLINE=1 under --offline or PION_OFFLINE; not otherwise", async () => {
    // PI_OFFLINE="" is not offline: it keeps a developer's own setting out of the test
    expect(await seen(["--offline"], { PI_OFFLINE: "" })).toEqual({ extension: "1", bash: "1" });
    expect(await seen([], { PI_OFFLINE: "", PION_OFFLINE: "yes" })).toEqual({ extension: "1", bash: "1" });
    expect(await seen([], { PI_OFFLINE: "" })).toEqual({ extension: "", bash: "" });
  });

  test.concurrent("no network activity besides the model request: nothing reaches a proxy every other host goes through", async () => {
    let connections = 0;
    const trap = Bun.listen({
      hostname: "127.0.0.1",
      port: 0,
      socket: { open: (s) => void (connections++, s.end()), data: () => {} },
    });
    await using fake = startFakeProvider();
    const dirs = tempDirs();
    writeFakeModels(dirs.home, fake.url);
    fake.enqueue({ blocks: [{ type: "text", text: "offline answer" }] });
    const proxy = `http://127.0.0.1:${trap.port}`;
    const env = { HTTP_PROXY: proxy, HTTPS_PROXY: proxy, http_proxy: proxy, https_proxy: proxy, NO_PROXY: "127.0.0.1", no_proxy: "127.0.0.1" };
    const r = await runPion(["-p", "--offline", "--model", "fake/fake-model", "hello"], { ...dirs, env });
    trap.stop(true);
    expect(r.stdout).toBe("offline answer\n");
    expect(r.code).toBe(0);
    expect(fake.requests.map((q) => q.path)).toEqual(["/v1/messages"]);
    expect(connections).toBe(0);
  });
});
