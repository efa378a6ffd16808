import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { OAuthCredential } from "../../../src/credentials/auth-file.ts";
import { withFileLock } from "../../../src/credentials/file-lock.ts";
import { chatgptAccountId, isExpired, refreshOAuth, refreshStoredLogin, tokenUrlVariable } from "../../../src/credentials/oauth-refresh.ts";

const seen: { type: string | null; body: string }[] = [];
let answer: () => Response = () => Response.json({});
const server = Bun.serve({
  port: 0,
  fetch: async (req) => {
    seen.push({ type: req.headers.get("content-type"), body: await req.text() });
    return answer();
  },
});
afterAll(() => server.stop(true));
const url = `http://127.0.0.1:${server.port}/token`;
const login = (o: Partial<OAuthCredential> = {}): OAuthCredential => ({ type: "oauth", access: "old", refresh: "r-old", expires: Date.now() - 1, ...o });
const jwt = (claims: unknown) => `h.${Buffer.from(JSON.stringify(claims)).toString("base64url")}.s`;

describe("OAuth refresh", () => {
  test("expiry has a margin; the override variable is named after the provider", () => {
    expect(isExpired(login({ expires: Date.now() + 10_000 }))).toBe(true);
    expect(isExpired(login({ expires: Date.now() + 600_000 }))).toBe(false);
    expect(tokenUrlVariable("openai-codex")).toBe("PION_OAUTH_TOKEN_URL_OPENAI_CODEX");
  });

  test("Anthropic: JSON body, five minutes off the lifetime, extras kept", async () => {
    answer = () => Response.json({ access_token: "new", refresh_token: "r-new", expires_in: 3600 });
    const t0 = Date.now();
    const fresh = await refreshOAuth("anthropic", login({ extra: 1 }), { PION_OAUTH_TOKEN_URL_ANTHROPIC: url });
    expect(fresh).toMatchObject({ type: "oauth", access: "new", refresh: "r-new", extra: 1 });
    expect(fresh.expires).toBeGreaterThanOrEqual(t0 + 3600_000 - 300_000);
    expect(fresh.expires).toBeLessThan(t0 + 3600_000);
    const last = seen.at(-1)!;
    expect(last.type).toBe("application/json");
    expect(JSON.parse(last.body)).toMatchObject({ grant_type: "refresh_token", refresh_token: "r-old" });
  });

  test("OpenAI Codex: a form body and the account id from the token", async () => {
    const access = jwt({ "https://api.openai.com/auth": { chatgpt_account_id: "acct-9" } });
    expect(chatgptAccountId(access)).toBe("acct-9");
    expect(chatgptAccountId("not-a-jwt")).toBeUndefined();
    answer = () => Response.json({ access_token: access, refresh_token: "r2", expires_in: 100 });
    const fresh = await refreshOAuth("openai-codex", login({ accountId: "stale" }), { PION_OAUTH_TOKEN_URL_OPENAI_CODEX: url });
    expect(fresh.accountId).toBe("acct-9");
    expect(seen.at(-1)!.type).toContain("application/x-www-form-urlencoded");
    expect(new URLSearchParams(seen.at(-1)!.body).get("refresh_token")).toBe("r-old");
  });

  test("xAI keeps the old refresh token when none comes back; failures are one line", async () => {
    answer = () => Response.json({ access_token: "x-new" });
    expect((await refreshOAuth("xai", login(), { PION_OAUTH_TOKEN_URL_XAI: url })).refresh).toBe("r-old");
    answer = () => new Response("nope", { status: 401 });
    await expect(refreshOAuth("xai", login(), { PION_OAUTH_TOKEN_URL_XAI: url })).rejects.toThrow("HTTP 401");
    await expect(refreshOAuth("openrouter", login(), {})).rejects.toThrow("cannot refresh");
  });
});

describe("the other endpoints", () => {
  test("Kimi Code: a form grant at the reference's host override", async () => {
    answer = () => Response.json({ access_token: "k-new", refresh_token: "k-r", expires_in: 900 });
    const fresh = await refreshOAuth("kimi-coding", login(), { KIMI_CODE_OAUTH_HOST: `http://127.0.0.1:${server.port}/` });
    expect(fresh).toMatchObject({ access: "k-new", refresh: "k-r" });
    expect(new URLSearchParams(seen.at(-1)!.body).get("client_id")).toBeTruthy();
  });

  test("Copilot: the GitHub login is exchanged, refresh and enterpriseUrl kept, five minutes off", async () => {
    const expiresAt = Math.floor(Date.now() / 1000) + 1800;
    answer = () => Response.json({ token: "tid=c", expires_at: expiresAt });
    const fresh = await refreshOAuth("github-copilot", login({ enterpriseUrl: "ghe.example.com" }), { PION_OAUTH_TOKEN_URL_GITHUB_COPILOT: url });
    expect(fresh).toMatchObject({ access: "tid=c", refresh: "r-old", enterpriseUrl: "ghe.example.com", expires: expiresAt * 1000 - 300_000 });
    answer = () => Response.json({ token: 3 });
    await expect(refreshOAuth("github-copilot", login(), { PION_OAUTH_TOKEN_URL_GITHUB_COPILOT: url })).rejects.toThrow("without token");
  });
});

describe("the stored login", () => {
  const dir = mkdtempSync(join(tmpdir(), "oauth-store-"));

  test("refreshed under the lock, written whole with mode 0600, other entries kept", async () => {
    const file = join(dir, "auth.json");
    writeFileSync(file, JSON.stringify({ other: { type: "api_key", key: "k" }, anthropic: login() }), { mode: 0o644 });
    answer = () => Response.json({ access_token: "stored-new", refresh_token: "r3", expires_in: 3600 });
    const fresh = await refreshStoredLogin(file, "anthropic", { PION_OAUTH_TOKEN_URL_ANTHROPIC: url });
    const data = JSON.parse(readFileSync(file, "utf8"));
    expect(data.other).toEqual({ type: "api_key", key: "k" });
    expect(data.anthropic).toEqual(fresh);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  test("a login another process refreshed meanwhile is used as it is, with no request", async () => {
    const file = join(dir, "auth2.json");
    const valid = login({ access: "theirs", expires: Date.now() + 3_600_000 });
    writeFileSync(file, JSON.stringify({ anthropic: valid }));
    const before = seen.length;
    expect(await refreshStoredLogin(file, "anthropic", { PION_OAUTH_TOKEN_URL_ANTHROPIC: url })).toEqual(valid);
    expect(seen.length).toBe(before);
  });

  test("the lock waits for a live holder and takes over a stale one", async () => {
    const file = join(dir, "locked.json");
    writeFileSync(file, "{}");
    mkdirSync(`${file}.lock`);
    let ran = false;
    const waiting = withFileLock(file, () => (ran = true));
    await Bun.sleep(150);
    expect(ran).toBe(false);
    const old = new Date(Date.now() - 60_000);
    utimesSync(`${file}.lock`, old, old);
    await waiting;
    expect(ran).toBe(true);
    expect(existsSync(`${file}.lock`)).toBe(false);
  });
});
