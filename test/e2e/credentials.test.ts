/**
 * Credentials stay with pion: the processes it starts for the model or the host (bash tool,
 * RPC bash, pi.exec) get its environment minus the keys it uses, as shellEnv shapes it; a key
 * printed anyway is masked in tool results, events, the model's context, the session and exports.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { startFakeProvider } from "../support/fake-provider.ts";
import { BINARY, GATED_COMMAND, Pion, releaseGate, tempDirs, writeFakeModels, writeSettings, type Rec } from "../support/pion.ts";

const EXEC_ENV = resolve(import.meta.dir, "../fixtures/extensions/exec-env.ts");
const tag = () => crypto.randomUUID().replaceAll("-", "");
/** Variable names in `env` output. */
const names = (envOutput: string) => [...new Set(envOutput.split("\n").map((l) => l.split("=")[0]!).filter(Boolean))];
/** What bash sets itself. */
const BASH_OWN = ["PWD", "SHLVL", "_", "OLDPWD"];
const MODEL = { id: "fake-model", name: "fake-model", reasoning: true, input: ["text"], contextWindow: 200000, maxTokens: 8192 };

interface Start {
  env?: Record<string, string>;
  args?: string[];
  /** models.json apiKey of the "fake" provider. */
  apiKey?: string;
  settings?: Record<string, unknown>;
  project?: Record<string, unknown>;
}

function start(o: Start & { binary?: boolean } = {}) {
  const seenKeys: string[] = [];
  const fake = startFakeProvider({ onRequest: (req) => void seenKeys.push(String(req.headers["x-api-key"])) });
  const dirs = tempDirs();
  writeFakeModels(dirs.home, fake.url, o.apiKey ? { fake: { baseUrl: fake.url, api: "anthropic-messages", apiKey: o.apiKey, models: [MODEL] } } : {});
  if (o.settings) writeSettings(dirs.home, o.settings);
  if (o.project) {
    mkdirSync(join(dirs.cwd, ".pion"), { recursive: true });
    writeFileSync(join(dirs.cwd, ".pion", "settings.json"), JSON.stringify(o.project));
  }
  const p = new Pion({ ...dirs, env: o.env, binary: o.binary, args: ["--mode", "rpc", "--model", "fake/fake-model", ...(o.args ?? [])] });
  return { fake, p, seenKeys, ...dirs };
}

/** The RPC bash command's output. */
async function hostBash(p: Pion, command: string): Promise<string> {
  const r = await p.request({ type: "bash", command });
  expect(r.success).toBe(true);
  return r.data.output as string;
}

/** One model turn calling `tool` with `args`; the tool_execution_end record. */
async function toolCall(p: Pion, fake: ReturnType<typeof startFakeProvider>, tool: string, args: Rec): Promise<Rec> {
  fake.enqueue({ blocks: [{ type: "toolCall", name: tool, arguments: args }] }, { blocks: [{ type: "text", text: "ok" }] });
  const from = p.records.length;
  await p.request({ type: "prompt", message: `run ${tool}` });
  await p.waitFor("agent_settled", from);
  return p.records.slice(from).find((r) => r.type === "tool_execution_end")!;
}
const textOf = (end: Rec) => (end.result.content as Rec[]).map((c) => c.text).join("");

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true })
    .map((f) => join(dir, String(f)))
    .filter((f) => statSync(f).isFile());
}

describe("the environment of processes pion starts", () => {
  test.concurrent("a provider key in the environment and a models.json $VAR key reach no child: bash tool, RPC bash, pi.exec", async () => {
    const t = tag();
    const env = { ANTHROPIC_API_KEY: `sk-ant-${t}`, MY_PROXY_KEY: `proxy-${t}`, KEY_ALIAS: `Bearer sk-ant-${t}`, PLAIN_SETTING: "kept" };
    const { fake, p, seenKeys } = start({ env, apiKey: "$MY_PROXY_KEY", args: ["-e", EXEC_ENV] });
    const outputs = {
      rpc: await hostBash(p, "env"),
      tool: textOf(await toolCall(p, fake, "bash", { command: "env" })),
      exec: textOf(await toolCall(p, fake, "show_env", {})),
    };
    expect(seenKeys[0]).toBe(`proxy-${t}`);
    for (const [where, out] of Object.entries(outputs)) {
      const vars = names(out);
      expect({ where, stripped: ["ANTHROPIC_API_KEY", "MY_PROXY_KEY", "KEY_ALIAS"].filter((n) => vars.includes(n)) }).toEqual({ where, stripped: [] });
      expect({ where, kept: ["PLAIN_SETTING", "PATH", "PION_HOME"].filter((n) => vars.includes(n)) }).toEqual({ where, kept: ["PLAIN_SETTING", "PATH", "PION_HOME"] });
      expect(out).not.toContain(t);
    }
    expect(await hostBash(p, 'echo "[$ANTHROPIC_API_KEY][$MY_PROXY_KEY]"')).toBe("[][]\n");
    // Nothing the model was sent holds a key.
    expect(JSON.stringify(fake.requests.map((r) => r.body))).not.toContain(t);
    await p.close();
    await fake.stop();
  }, 30_000);

  test.concurrent("the value of --api-key appears in no child variable, whatever its name", async () => {
    const t = tag();
    const { fake, p, seenKeys } = start({ env: { COPIED_VALUE: `sk-flag-${t}`, SOMETHING_ELSE: "fine" }, args: ["--api-key", `sk-flag-${t}`] });
    const rpc = await hostBash(p, "env");
    const tool = textOf(await toolCall(p, fake, "bash", { command: "env" }));
    expect(seenKeys[0]).toBe(`sk-flag-${t}`);
    for (const out of [rpc, tool]) {
      expect(names(out)).not.toContain("COPIED_VALUE");
      expect(names(out)).toContain("SOMETHING_ELSE");
      expect(out).not.toContain(t);
    }
    await p.close();
    await fake.stop();
  }, 30_000);

  test.concurrent('shellEnv: include passes a key on purpose; inherit "core" keeps only the core variables', async () => {
    const t = tag();
    const { fake, p } = start({
      env: { OPENAI_API_KEY: `sk-openai-${t}`, ANTHROPIC_API_KEY: `sk-ant-${t}`, EDITOR: "vi", LC_CTYPE: "C.UTF-8" },
      settings: { shellEnv: { inherit: "core", include: ["OPENAI_API_KEY"] } },
    });
    const vars = names(await hostBash(p, "env")).filter((n) => !BASH_OWN.includes(n));
    const allowed = ["PATH", "HOME", "USER", "SHELL", "LANG", "TERM", "TMPDIR", "TZ", "OPENAI_API_KEY"];
    expect(vars.filter((n) => !allowed.includes(n) && !n.startsWith("LC_"))).toEqual([]);
    expect(vars).toContain("LC_CTYPE");
    expect(vars).toContain("TMPDIR");
    // The included key reaches the command; printed, it is still masked.
    expect(await hostBash(p, `[ "$OPENAI_API_KEY" = "sk-openai-${t}" ] && echo passed; echo $OPENAI_API_KEY`)).toBe("passed\n[redacted: OPENAI_API_KEY]\n");
    const tool = textOf(await toolCall(p, fake, "bash", { command: "env | cut -d= -f1" }));
    expect(tool.split("\n")).toContain("OPENAI_API_KEY");
    expect(tool.split("\n")).not.toContain("EDITOR");
    await p.close();
    await fake.stop();
  }, 30_000);

  test.concurrent("a trusted project's settings add exclude entries but cannot include a key; an untrusted one's are not read", async () => {
    const t = tag();
    const o = {
      env: { ANTHROPIC_API_KEY: `sk-ant-${t}`, EXTRA_TOKEN: "x", OTHER: "y" },
      settings: { shellEnv: { exclude: ["NOTHING_*"] } },
      project: { shellEnv: { include: ["ANTHROPIC_API_KEY"], exclude: ["EXTRA_*"] } },
    };
    const trusted = start({ ...o, args: ["--approve"] });
    const vars = names(await hostBash(trusted.p, "env"));
    expect(["ANTHROPIC_API_KEY", "EXTRA_TOKEN", "OTHER"].filter((n) => vars.includes(n))).toEqual(["OTHER"]);
    expect(trusted.p.stderr).toContain("ignoring shellEnv.include from the project");
    const untrusted = start({ ...o, args: ["--no-approve"] });
    const untrustedVars = names(await hostBash(untrusted.p, "env"));
    expect(["ANTHROPIC_API_KEY", "EXTRA_TOKEN", "OTHER"].filter((n) => untrustedVars.includes(n))).toEqual(["EXTRA_TOKEN", "OTHER"]);
    for (const { p, fake } of [trusted, untrusted]) {
      await p.close();
      await fake.stop();
    }
  }, 30_000);
});

describe("a key printed anyway is masked", () => {
  test.concurrent("a key file read by the model: tool results, events, the model's context, the session files and an HTML export", async () => {
    const t = tag();
    const key = `sk-ant-api03-${t}`;
    const { fake, p, cwd, home } = start({ env: { ANTHROPIC_API_KEY: key } });
    writeFileSync(join(cwd, "key.txt"), `ANTHROPIC_API_KEY=${key}\n`);
    const masked = "ANTHROPIC_API_KEY=[redacted: ANTHROPIC_API_KEY]\n";
    const bash = await toolCall(p, fake, "bash", { command: "cat key.txt" });
    expect(textOf(bash)).toBe(masked);
    const read = await toolCall(p, fake, "read", { path: "key.txt" });
    expect(textOf(read)).toBe(masked.trimEnd());
    // The host's bash command: the streamed deltas, the response and the recorded message.
    const from = p.records.length;
    expect(await hostBash(p, "cat key.txt")).toBe(masked);
    expect(p.records.slice(from).filter((r) => r.type === "bash_execution_update").map((r) => r.delta).join("")).toBe(masked);
    // A long output keeps its full-output file: masked too, and complete.
    const long = await p.request({ type: "bash", command: "seq 1 100000; cat key.txt; seq 1 3" });
    expect(long.data.truncated).toBe(true);
    expect(long.data.output).toContain(masked);
    const full = readFileSync(long.data.fullOutputPath, "utf8");
    expect(full.endsWith(`100000\n${masked}1\n2\n3\n`)).toBe(true);
    expect(full).not.toContain(t);
    // The model saw the masked text (the bash result reaches it with the next prompt).
    fake.enqueue({ blocks: [{ type: "text", text: "noted" }] });
    await p.request({ type: "prompt", message: "what did the file say?" });
    await p.waitFor((r) => r.type === "agent_settled", from);
    const sent = JSON.stringify(fake.requests.map((r) => r.body));
    expect(sent).toContain("[redacted: ANTHROPIC_API_KEY]");
    expect(sent).not.toContain(t);
    const state = await p.request({ type: "get_state" });
    const exported = await p.request({ type: "export_html", outputPath: "export.html" });
    expect(exported.success).toBe(true);
    await p.close();
    await fake.stop();
    const html = readFileSync(exported.data.path, "utf8");
    expect(html).toContain("[redacted: ANTHROPIC_API_KEY]");
    const jsonl = readFileSync(state.data.sessionFile, "utf8");
    expect(jsonl).toContain("[redacted: ANTHROPIC_API_KEY]");
    const leaks = [...filesUnder(join(home, "sessions")), exported.data.path].filter((f) => readFileSync(f).includes(t));
    expect(leaks).toEqual([]);
    expect(JSON.stringify(p.records)).not.toContain(t);
  }, 30_000);

  test.concurrent("a key printed in two pieces by a running command: no partial result, event or session shows its beginning", async () => {
    const t = tag();
    const key = `sk-${t}`;
    const head = key.slice(0, 14);
    const { fake, p, cwd } = start({ env: { OPENAI_API_KEY: key } });
    writeFileSync(join(cwd, "a"), head);
    writeFileSync(join(cwd, "b"), key.slice(14));
    fake.enqueue({ blocks: [{ type: "toolCall", id: "split", name: "bash", arguments: { command: `printf 'token: %s' "$(cat a)"; ${GATED_COMMAND}; cat b; echo` } }] });
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    const from = p.records.length;
    await p.request({ type: "prompt", message: "print it" });
    // The first piece is out; the command waits for the gate before printing the rest.
    const partial = await p.waitFor((r) => r.type === "tool_execution_update" && textOf({ result: r.partialResult }) !== "", from);
    releaseGate(cwd);
    expect(textOf({ result: partial.partialResult })).toBe("token: ");
    await p.waitFor("agent_settled", from);
    const end = p.records.find((r) => r.type === "tool_execution_end" && r.toolCallId === "split")!;
    expect(textOf(end)).toBe("token: [redacted: OPENAI_API_KEY]\n");
    const state = await p.request({ type: "get_state" });
    await p.close();
    await fake.stop();
    expect(JSON.stringify(p.records.slice(from))).not.toContain(head);
    expect(readFileSync(state.data.sessionFile, "utf8")).not.toContain(head);
    expect(JSON.stringify(fake.requests.map((r) => r.body))).not.toContain(head);
  }, 30_000);

  // CI builds the binary before the tests; locally it may be missing.
  test.skipIf(!existsSync(BINARY) && !process.env.CI)("dist/pion: the RPC bash command's child has no key, and a printed one streams masked", async () => {
    const t = tag();
    const { fake, p, cwd } = start({ binary: true, env: { ANTHROPIC_API_KEY: `sk-ant-${t}` } });
    writeFileSync(join(cwd, "key.txt"), `sk-ant-${t}`);
    const from = p.records.length;
    const out = await hostBash(p, 'echo "[$ANTHROPIC_API_KEY]"; head -c 300000 /dev/zero | tr "\\0" a; cat key.txt; echo');
    expect(out.endsWith("a[redacted: ANTHROPIC_API_KEY]")).toBe(true);
    const streamed = p.records.slice(from).filter((r) => r.type === "bash_execution_update").map((r) => r.delta).join("");
    expect(streamed).toBe(`[]\n${"a".repeat(300000)}[redacted: ANTHROPIC_API_KEY]\n`);
    await p.close();
    await fake.stop();
  }, 30_000);

  test.concurrent("get_capabilities lists the feature", async () => {
    const { fake, p } = start();
    const caps = await p.request({ type: "get_capabilities" });
    expect(caps.data.features).toMatchObject({ shellEnv: true, secretMasking: true });
    await p.close();
    await fake.stop();
  }, 30_000);
});
