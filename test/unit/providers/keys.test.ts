import { expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Catalog } from "../../../src/providers/catalog/load.ts";
import { createKeyResolver } from "../../../src/providers/keys.ts";

function resolver(auth: Record<string, unknown>, env: Record<string, string> = {}, fileKeys: Record<string, string> = {}) {
  const home = mkdtempSync(join(tmpdir(), "keys-"));
  const path = join(home, "auth.json");
  writeFileSync(path, JSON.stringify(auth));
  const warnings: string[] = [];
  const keys = createKeyResolver({
    env,
    catalog: new Catalog(home),
    fileKey: (p) => fileKeys[p],
    providers: () => ["anthropic", "openai", "zai"],
    authPaths: [path],
    warn: (l) => void warnings.push(l),
  });
  return { keys, path, warnings };
}

test("every credential an auth.json holds is known to the guard: keys, command output, env values, login tokens", () => {
  const { keys } = resolver({
    anthropic: { type: "oauth", access: "access-token-1", refresh: "refresh-token-1", expires: Date.now() + 3_600_000 },
    openai: { type: "api_key", key: "!echo command-key-1", env: { OPENAI_ORG_SECRET: "org-secret-1" } },
    "openai-codex": { type: "oauth", access: "codex-access-1", refresh: "codex-refresh-1", expires: 1 },
    zai: { type: "api_key", key: "$ZAI_SOURCE" },
  }, { ZAI_SOURCE: "zai-from-variable" });
  const values = keys.credentials().map((c) => c.value);
  for (const v of ["access-token-1", "refresh-token-1", "command-key-1", "org-secret-1", "codex-access-1", "codex-refresh-1", "zai-from-variable"]) {
    expect(values).toContain(v);
  }
  const names = keys.credentials().flatMap((c) => c.envNames);
  expect(names).toContain("ZAI_SOURCE");
  expect(names).toContain("ZAI_API_KEY");
  expect(names).toContain("ANTHROPIC_AUTH_TOKEN");
});

test("origins and request auth: a login as the key, ANTHROPIC_AUTH_TOKEN as a Bearer header", async () => {
  const { keys } = resolver({ anthropic: { type: "oauth", access: "sk-ant-oat01-a", refresh: "r", expires: Date.now() + 3_600_000 } });
  expect(keys.keyOrigin("anthropic")).toBe("auth.json");
  expect(await keys.requestAuth("anthropic")).toEqual({ apiKey: "sk-ant-oat01-a" });
  const bearer = resolver({}, { ANTHROPIC_AUTH_TOKEN: "gw", ANTHROPIC_API_KEY: "k" }).keys;
  expect(bearer.keyOrigin("anthropic")).toBe("ANTHROPIC_AUTH_TOKEN");
  expect(await bearer.requestAuth("anthropic")).toEqual({ headers: { Authorization: "Bearer gw" } });
});

test("an expired login that cannot be refreshed is an error naming the reference's /login", async () => {
  const { keys, path } = resolver({ openrouter: { type: "oauth", access: "a", refresh: "", expires: 1 } });
  expect(keys.apiKey("openrouter")).toBe("a");
  await expect(keys.requestAuth("openrouter")).rejects.toThrow(`${path} has expired`);
  await expect(keys.requestAuth("openrouter")).rejects.toThrow("/login openrouter");
});

test("a malformed entry is reported once and the rest of the file still counts", () => {
  const { keys, warnings, path } = resolver({ anthropic: { type: "api_key", key: 5 }, zai: { type: "api_key", key: "z" } });
  expect(keys.apiKey("zai")).toBe("z");
  expect(keys.apiKey("anthropic")).toBeUndefined();
  expect(warnings).toHaveLength(1);
  expect(warnings[0]).toContain(path);
});
