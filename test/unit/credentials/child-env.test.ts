import { describe, expect, test } from "bun:test";
import { buildChildEnv, isSecretName, nameMatcher, type ChildEnvPolicy } from "../../../src/credentials/child-env.ts";

const env = {
  PATH: "/usr/bin",
  HOME: "/home/u",
  LANG: "C.UTF-8",
  LC_ALL: "C",
  TERM: "xterm",
  EDITOR: "vi",
  ANTHROPIC_API_KEY: "sk-ant-0123456789",
  COPY_OF_KEY: "Bearer sk-ant-0123456789",
  GITHUB_TOKEN: "ghp_x",
  AWS_REGION: "eu-west-1",
  AWS_SECRET_ACCESS_KEY: "aws-secret",
  PION_HOME: "/home/u/.pion",
  PION_SERVICE_TOKEN: "pion-token",
  UNSET: undefined,
};
const policy = (extra: Partial<ChildEnvPolicy> = {}): ChildEnvPolicy => ({
  credentialNames: new Set(["ANTHROPIC_API_KEY", "OPENAI_API_KEY"]),
  secretValues: ["sk-ant-0123456789"],
  ...extra,
});

describe("buildChildEnv", () => {
  test("strips credential names, pion's secrets and any variable holding a credential value", () => {
    expect(Object.keys(buildChildEnv(env, policy())).sort()).toEqual(
      ["AWS_REGION", "AWS_SECRET_ACCESS_KEY", "EDITOR", "GITHUB_TOKEN", "HOME", "LANG", "LC_ALL", "PATH", "PION_HOME", "TERM"].sort(),
    );
  });

  test("exclude takes more names and globs; include passes a name even when it holds a credential", () => {
    const out = buildChildEnv(env, policy({ exclude: ["*_TOKEN", "AWS_*"], include: ["ANTHROPIC_API_KEY"] }));
    expect(Object.keys(out).sort()).toEqual(["ANTHROPIC_API_KEY", "EDITOR", "HOME", "LANG", "LC_ALL", "PATH", "PION_HOME", "TERM"].sort());
    expect(out.ANTHROPIC_API_KEY).toBe("sk-ant-0123456789");
  });

  test('inherit "core" keeps only the core variables and include', () => {
    const out = buildChildEnv(env, policy({ inherit: "core", include: ["EDITOR"] }));
    expect(out).toEqual({ PATH: "/usr/bin", HOME: "/home/u", LANG: "C.UTF-8", LC_ALL: "C", TERM: "xterm", EDITOR: "vi" });
  });

  test("explicit entries (an MCP server's env) are added as given", () => {
    const out = buildChildEnv(env, policy({ inherit: "core" }), { ANTHROPIC_API_KEY: "sk-ant-0123456789", X: "1" });
    expect(out.ANTHROPIC_API_KEY).toBe("sk-ant-0123456789");
    expect(out.X).toBe("1");
  });
});

describe("nameMatcher", () => {
  test("exact names, * and ? globs, case-sensitive, regex characters literal", () => {
    const m = nameMatcher(["AWS_*", "*_TOKEN", "A?C", "X.Y"]);
    expect(["AWS_", "AWS_KEY", "GH_TOKEN", "ABC", "X.Y"].every(m)).toBe(true);
    expect(["aws_key", "TOKEN", "AC", "XzY", "MY_TOKENS"].some(m)).toBe(false);
    expect(nameMatcher([])("ANY")).toBe(false);
  });
});

describe("isSecretName", () => {
  test("the key variables of a catalog, not its region, project or endpoint variables", () => {
    const keys = ["ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY", "AWS_BEARER_TOKEN_BEDROCK", "HF_TOKEN", "CLARIFAI_PAT", "GOOGLE_APPLICATION_CREDENTIALS", "PION_AUTH_HEADER"];
    const settings = ["AWS_REGION", "DATABRICKS_HOST", "GOOGLE_VERTEX_LOCATION", "CLOUDFLARE_ACCOUNT_ID", "PRIVATEMODE_ENDPOINT", "PION_HOME"];
    expect(keys.filter((n) => !isSecretName(n))).toEqual([]);
    expect(settings.filter(isSecretName)).toEqual([]);
  });
});
