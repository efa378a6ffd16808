/**
 * The ChatGPT subscription backend: a reference agent's `openai-codex` login in auth.json lets
 * `--model openai-codex/<id>` talk to `<baseUrl>/codex/responses` (moved to the fake by a
 * models.json entry), with the token's account id in `chatgpt-account-id`; an expired login is
 * refreshed first; a models.json provider on `openai-codex-responses` works the same way.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeProvider, type FakeProvider, type FakeRequest } from "../support/fake-provider.ts";
import { Pion, promptToResult, runPion, tempDirs } from "../support/pion.ts";

const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");
/** A ChatGPT access token: a JWT whose OpenAI auth claim names the account. */
const accessToken = (account: string) => `${b64({ alg: "none", typ: "JWT" })}.${b64({ "https://api.openai.com/auth": { chatgpt_account_id: account } })}.sig`;
const login = (access: string, expires: number) => ({ type: "oauth", access, refresh: "codex-refresh-old", expires, accountId: "acct-old" });

function setup(fake: FakeProvider, auth: Record<string, unknown>, providers: Record<string, unknown> = { "openai-codex": { baseUrl: fake.url } }) {
  const dirs = tempDirs();
  writeFileSync(join(dirs.home, "models.json"), JSON.stringify({ providers }));
  writeFileSync(join(dirs.home, "auth.json"), JSON.stringify(auth, null, 2), { mode: 0o600 });
  return dirs;
}

const bodyOf = (r: FakeRequest) => r.body as { model: string; input: Record<string, unknown>[]; store: boolean; include: string[]; reasoning?: { effort: string } };

describe("openai-codex: a ChatGPT login", () => {
  test.concurrent("rpc: the models are offered; text and a tool call round trip carry the login and its account id", async () => {
    await using fake = startFakeProvider();
    const token = accessToken("acct-e2e");
    const dirs = setup(fake, { "openai-codex": login(token, Date.now() + 3_600_000) });
    writeFileSync(join(dirs.cwd, "note.txt"), "the note says hello");
    fake.enqueue(
      { blocks: [{ type: "thinking", thinking: "read it", signature: "enc-codex" }, { type: "toolCall", id: "call_1", name: "read", arguments: { path: "note.txt" } }] },
      { blocks: [{ type: "text", text: ["It says ", "hello."] }], usage: { input: 40, output: 6, cacheRead: 8 } },
    );
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "openai-codex/gpt-6-sol", "--thinking", "medium"] });
    try {
      const models = (await p.request({ type: "get_available_models" })).data.models as { provider: string; id: string; api: string }[];
      const codex = models.filter((m) => m.provider === "openai-codex").map((m) => m.id);
      expect(codex).toContain("gpt-6-sol");
      expect(codex).toContain("gpt-5.6-luna");
      expect(models.find((m) => m.id === "gpt-6-sol")!.api).toBe("openai-codex-responses");

      const recs = await promptToResult(p, "what does note.txt say?");
      const final = recs.findLast((r) => r.type === "message_end")!.message;
      expect(final).toMatchObject({ role: "assistant", api: "openai-codex-responses", provider: "openai-codex", model: "gpt-6-sol", stopReason: "stop", content: [{ type: "text", text: "It says hello." }] });
      expect(final.usage).toMatchObject({ input: 40, output: 6, cacheRead: 8 });
      expect(recs.some((r) => r.type === "tool_execution_end" && r.toolName === "read" && !r.isError)).toBe(true);

      expect(fake.failures).toEqual([]);
      expect(fake.requests).toHaveLength(2);
      for (const req of fake.requests) {
        expect(req.path).toBe("/codex/responses");
        expect(req.headers).toMatchObject({ authorization: `Bearer ${token}`, "chatgpt-account-id": "acct-e2e", "openai-beta": "responses=experimental", originator: "pi" });
        expect(req.headers["session-id"]).toBeTruthy();
        const body = bodyOf(req);
        expect(body).toMatchObject({ model: "gpt-6-sol", store: false, include: ["reasoning.encrypted_content"], reasoning: { effort: "medium" } });
        expect(body.input[0]).toMatchObject({ role: "developer" });
      }
      const second = bodyOf(fake.requests[1]!).input;
      expect(second.find((i) => i.type === "reasoning")).toMatchObject({ encrypted_content: "enc-codex" });
      expect(second.find((i) => i.type === "function_call")).toMatchObject({ call_id: "call_1", name: "read" });
      const output = second.find((i) => i.type === "function_call_output")!;
      expect(output).toMatchObject({ call_id: "call_1" });
      expect(String(output.output)).toContain("the note says hello");
    } finally {
      await p.close();
    }
  });

  test.concurrent("an expired login is refreshed first; the new token's account goes out and is written back", async () => {
    await using fake = startFakeProvider({ replies: [{ blocks: [{ type: "text", text: "fresh" }] }] });
    const fresh = accessToken("acct-new");
    const grants: string[] = [];
    const tokens = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: async (req) => {
        grants.push(await req.text());
        return Response.json({ access_token: fresh, refresh_token: "codex-refresh-new", expires_in: 3600 });
      },
    });
    try {
      const dirs = setup(fake, { "openai-codex": login(accessToken("acct-old"), Date.now() - 1000) });
      const env = { PION_OAUTH_TOKEN_URL_OPENAI_CODEX: `http://127.0.0.1:${tokens.port}/oauth/token` };
      const run = await runPion(["-p", "--no-session", "--model", "openai-codex/gpt-6-luna", "hi"], { ...dirs, env });
      expect({ code: run.code, stdout: run.stdout.trim() }).toEqual({ code: 0, stdout: "fresh" });
      expect(new URLSearchParams(grants[0]).get("refresh_token")).toBe("codex-refresh-old");
      expect(fake.requests[0]!.headers).toMatchObject({ authorization: `Bearer ${fresh}`, "chatgpt-account-id": "acct-new" });
      const stored = JSON.parse(readFileSync(join(dirs.home, "auth.json"), "utf8"))["openai-codex"];
      expect(stored).toMatchObject({ type: "oauth", access: fresh, refresh: "codex-refresh-new", accountId: "acct-new" });
      expect(run.stderr).not.toContain("codex-refresh");
    } finally {
      tokens.stop(true);
    }
  });

  test.concurrent("a spent ChatGPT allowance (HTTP 429) fails the prompt with the plan, without retrying", async () => {
    const resetsAt = Math.floor(Date.now() / 1000) + 30 * 60;
    await using fake = startFakeProvider({ replies: [{ kind: "http_error", status: 429, body: { error: { type: "usage_limit_reached", message: "limit", plan_type: "PRO", resets_at: resetsAt } } }] });
    const dirs = setup(fake, { "openai-codex": login(accessToken("acct-1"), Date.now() + 3_600_000) });
    const run = await runPion(["-p", "--no-session", "--model", "openai-codex/gpt-6-sol", "hi"], dirs);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/usage limit.*\(pro plan\)/);
    expect(fake.requests).toHaveLength(1);
  });
});

describe("models.json: a provider on openai-codex-responses", () => {
  test.concurrent("its models stream through the Codex endpoint with the key's account id", async () => {
    await using fake = startFakeProvider({ replies: [{ blocks: [{ type: "text", text: "from my-codex" }] }] });
    const key = accessToken("acct-file");
    const providers = { "my-codex": { baseUrl: `${fake.url}/backend-api`, api: "openai-codex-responses", apiKey: key, models: [{ id: "c1", reasoning: false }] } };
    const dirs = setup(fake, {}, providers);
    const run = await runPion(["-p", "--no-session", "--model", "my-codex/c1", "hi"], dirs);
    expect(run.stderr).not.toContain("does not implement");
    expect({ code: run.code, stdout: run.stdout.trim() }).toEqual({ code: 0, stdout: "from my-codex" });
    const req = fake.requests[0]!;
    expect(req.path).toBe("/backend-api/codex/responses");
    expect(req.headers["chatgpt-account-id"]).toBe("acct-file");
    expect(bodyOf(req).reasoning).toBeUndefined();
  });
});
