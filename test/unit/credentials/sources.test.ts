/** Where the guard's credentials come from: the model registry and the shellEnv settings. */
import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadSettings } from "../../../src/config.ts";
import { loadModels } from "../../../src/providers/models.ts";

const dir = () => mkdtempSync(join(tmpdir(), "pion-cred-"));
const model = [{ id: "m" }];

describe("registry credentials()", () => {
  test("catalog env names, $VAR, bare names, !command variables and values, literals, --api-key", () => {
    const home = dir();
    writeFileSync(
      join(home, "models.json"),
      JSON.stringify({
        providers: {
          viaenv: { baseUrl: "http://127.0.0.1:1", apiKey: "$MY_PROXY_KEY", models: model },
          bare: { baseUrl: "http://127.0.0.1:1", apiKey: "BARE_KEY_VAR", models: model },
          cmd: { baseUrl: "http://127.0.0.1:1", apiKey: "!printf %s \"$CMD_SECRET\"-${CMD_SUFFIX}", models: model },
          literal: { baseUrl: "http://127.0.0.1:1", apiKey: "literal-key-value", models: model },
        },
      }),
    );
    const env = { ANTHROPIC_API_KEY: "sk-ant-from-env", MY_PROXY_KEY: "proxy-key-value", BARE_KEY_VAR: "bare-key-value", CMD_SECRET: "cmdsecret", CMD_SUFFIX: "x1" };
    const creds = loadModels(home, env, { apiKey: "flag-key-value", provider: "literal" }).credentials();
    const byLabel = Object.fromEntries(creds.map((c) => [c.label, c]));
    expect(byLabel.ANTHROPIC_API_KEY).toEqual({ label: "ANTHROPIC_API_KEY", envNames: ["ANTHROPIC_API_KEY"], value: "sk-ant-from-env" });
    expect(byLabel.OPENAI_API_KEY).toEqual({ label: "OPENAI_API_KEY", envNames: ["OPENAI_API_KEY"], value: undefined });
    expect(byLabel.MY_PROXY_KEY).toEqual({ label: "MY_PROXY_KEY", envNames: ["MY_PROXY_KEY"], value: "proxy-key-value" });
    expect(byLabel.BARE_KEY_VAR).toEqual({ label: "BARE_KEY_VAR", envNames: ["BARE_KEY_VAR"], value: "bare-key-value" });
    expect(byLabel["cmd apiKey"]).toEqual({ label: "cmd apiKey", envNames: ["CMD_SECRET", "CMD_SUFFIX"], value: "cmdsecret-x1" });
    expect(byLabel["literal apiKey"]).toEqual({ label: "literal apiKey", envNames: [], value: "literal-key-value" });
    expect(byLabel["--api-key"]).toEqual({ label: "--api-key", envNames: [], value: "flag-key-value" });
  });
});

describe("shellEnv settings", () => {
  test("a project adds exclude entries and may tighten inherit, but its include is ignored", () => {
    const home = dir();
    const cwd = dir();
    mkdirSync(join(cwd, ".pion"));
    writeFileSync(join(home, "settings.json"), JSON.stringify({ shellEnv: { include: ["OPENAI_API_KEY"], exclude: ["AWS_*"] } }));
    writeFileSync(join(cwd, ".pion", "settings.json"), JSON.stringify({ shellEnv: { include: ["ANTHROPIC_API_KEY"], exclude: ["*_TOKEN"], inherit: "core" } }));
    expect(loadSettings(home, cwd, true).shellEnv).toEqual({ include: ["OPENAI_API_KEY"], exclude: ["AWS_*", "*_TOKEN"], inherit: "core" });
    writeFileSync(join(home, "settings.json"), JSON.stringify({ shellEnv: { inherit: "core" } }));
    writeFileSync(join(cwd, ".pion", "settings.json"), JSON.stringify({ shellEnv: { inherit: "all", include: ["X"] } }));
    expect(loadSettings(home, cwd, true).shellEnv).toEqual({ inherit: "core" });
  });

  test("an invalid shellEnv names the field", () => {
    const home = dir();
    writeFileSync(join(home, "settings.json"), JSON.stringify({ shellEnv: { inherit: "some" } }));
    expect(() => loadSettings(home, dir(), true)).toThrow(/settings\.json.*shellEnv\.inherit/);
  });
});
