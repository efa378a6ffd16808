import { describe, expect, test } from "bun:test";
import { createCredentialGuard } from "../../../src/credentials/guard.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

function guard(env: Record<string, string | undefined> = {}) {
  let calls = 0;
  const g = createCredentialGuard({
    env: { PATH: "/bin", ANTHROPIC_API_KEY: "sk-ant-envvalue-1", PION_API_TOKEN: "pion-token-value", ...env },
    credentials: () => {
      calls++;
      return [
        { label: "ANTHROPIC_API_KEY", envNames: ["ANTHROPIC_API_KEY"], value: "sk-ant-envvalue-1" },
        { label: "OPENAI_API_KEY", envNames: ["OPENAI_API_KEY"] },
        { label: "local apiKey", envNames: [], value: "literal-key-123" },
        { label: "--api-key", envNames: [], value: "flag-key-4567" },
        { label: "tiny apiKey", envNames: [], value: "none" },
      ];
    },
  });
  return { g, calls: () => calls };
}

describe("credential guard", () => {
  test("masks every known value with its label; short values are left alone; credentials are read once", () => {
    const { g, calls } = guard();
    expect(calls()).toBe(0);
    expect(g.mask("a sk-ant-envvalue-1 b literal-key-123 c flag-key-4567 d pion-token-value e none")).toBe(
      "a [redacted: ANTHROPIC_API_KEY] b [redacted: local apiKey] c [redacted: --api-key] d [redacted: PION_API_TOKEN] e none",
    );
    g.mask("x");
    g.childEnv();
    expect(calls()).toBe(1);
  });

  test("maskDeep keeps untouched objects and image data as they are", () => {
    const { g } = guard();
    const clean = { content: [{ type: "text", text: "fine" }], details: { n: 1 } };
    expect(g.maskDeep(clean)).toBe(clean);
    const image = { type: "image", data: "sk-ant-envvalue-1", mimeType: "image/png" };
    const r = g.maskDeep({ content: [{ type: "text", text: "k=sk-ant-envvalue-1" }, image], details: { diff: ["-literal-key-123"] } });
    expect(r).toEqual({ content: [{ type: "text", text: "k=[redacted: ANTHROPIC_API_KEY]" }, image], details: { diff: ["-[redacted: local apiKey]"] } });
    expect(r.content[1]).toBe(image);
  });

  test("bytes are masked like text; the stream masker is absent when nothing is known", () => {
    const { g } = guard();
    expect(dec.decode(g.maskBytes(enc.encode("x flag-key-4567 y")))).toBe("x [redacted: --api-key] y");
    const s = g.byteStream()!;
    expect(dec.decode(s.push(enc.encode("a flag-key"), false)) + dec.decode(s.push(enc.encode("-4567 b"), true))).toBe("a [redacted: --api-key] b");
    expect(s.masked).toBe(1);
    const none = createCredentialGuard({ env: {}, credentials: () => [] });
    expect(none.byteStream()).toBeUndefined();
    const bytes = enc.encode("unchanged");
    expect(none.maskBytes(bytes)).toBe(bytes);
  });

  test("childEnv strips the credential names, values and pion's secrets, and applies shellEnv", () => {
    const { g } = guard({ OPENAI_API_KEY: "sk-openai-xxxxxx", KEY_COPY: "flag-key-4567", EDITOR: "vi" });
    expect(Object.keys(g.childEnv()).sort()).toEqual(["EDITOR", "PATH"]);
    const strict = createCredentialGuard({ env: { PATH: "/bin", EDITOR: "vi", OPENAI_API_KEY: "sk-o-123456789" }, credentials: () => [{ label: "OPENAI_API_KEY", envNames: ["OPENAI_API_KEY"] }], shellEnv: { inherit: "core", include: ["OPENAI_API_KEY"] } });
    expect(strict.childEnv()).toEqual({ PATH: "/bin", OPENAI_API_KEY: "sk-o-123456789" });
  });

  test("maskUnfinished masks, and leaves out an end that could begin a credential", () => {
    const { g } = guard();
    expect(g.maskUnfinished("token: sk-ant-env")).toBe("token: ");
    expect(g.maskUnfinished("a flag-key-4567 b sk-ant-envvalue-1")).toBe("a [redacted: --api-key] b [redacted: ANTHROPIC_API_KEY]");
    expect(g.maskUnfinished("sk-ant-other")).toBe("sk-ant-other");
    const clean = "nothing here";
    expect(g.maskUnfinished(clean)).toBe(clean);
    expect(createCredentialGuard({ env: {}, credentials: () => [] }).maskUnfinished("token: sk")).toBe("token: sk");
  });

  test("addCredentials: names leave childEnv and values are masked from then on; the configured ones are still read once", () => {
    const { g, calls } = guard({ MY_MCP_TOKEN: "mcp-token-value", COPY: "x mcp-token-value", SHORT_VAR: "abc" });
    expect(g.mask("mcp-token-value")).toBe("mcp-token-value");
    expect(Object.keys(g.childEnv())).toContain("MY_MCP_TOKEN");
    const masker = g.byteStream()!;
    g.addCredentials([{ label: "MY_MCP_TOKEN", envNames: ["MY_MCP_TOKEN"] }, { label: "SHORT_VAR", envNames: ["SHORT_VAR"] }]);
    expect(g.mask("a mcp-token-value b sk-ant-envvalue-1")).toBe("a [redacted: MY_MCP_TOKEN] b [redacted: ANTHROPIC_API_KEY]");
    expect(Object.keys(g.childEnv()).sort()).toEqual(["PATH"]);
    expect(dec.decode(g.byteStream()!.push(enc.encode("mcp-token-value"), true))).toBe("[redacted: MY_MCP_TOKEN]");
    // A masker made before keeps what it knew.
    expect(dec.decode(masker.push(enc.encode("mcp-token-value"), true))).toBe("mcp-token-value");
    expect(calls()).toBe(1);
    const lazy = guard();
    lazy.g.addCredentials([{ label: "X", envNames: ["X"] }]);
    expect(lazy.calls()).toBe(0);
  });
});
