import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseAuthJson, parseCredential, readAuthFiles } from "../../../src/credentials/auth-file.ts";

describe("auth.json entries", () => {
  test("api_key with a key and env; oauth with its extras kept", () => {
    expect(parseCredential({ type: "api_key", key: "!pass show x", env: { A: "1" } })).toEqual({ type: "api_key", key: "!pass show x", env: { A: "1" } });
    expect(parseCredential({ type: "api_key" })).toEqual({ type: "api_key" });
    const login = { type: "oauth" as const, access: "a", refresh: "r", expires: 1, accountId: "acc", enterpriseUrl: "ghe.example" };
    expect(parseCredential(login)).toEqual(login);
  });

  test("malformed entries say what is wrong", () => {
    expect(parseCredential("x")).toBe("not an object");
    expect(parseCredential({ type: "api_key", key: 3 })).toContain('"key"');
    expect(parseCredential({ type: "api_key", env: { A: 1 } })).toContain('"env"');
    expect(parseCredential({ type: "oauth", access: "a", refresh: "r", expires: "soon" })).toContain('"expires"');
    expect(parseCredential({ type: "oauth", access: "a", expires: 1 })).toContain('"refresh"');
    expect(parseCredential({ type: "bearer" })).toContain("bearer");
  });

  test("a file keeps its good entries and lists the bad ones; a BOM is allowed", () => {
    const { credentials, problems } = parseAuthJson('\uFEFF{"a":{"type":"api_key","key":"k"},"b":{"type":"x"}}');
    expect([...credentials.keys()]).toEqual(["a"]);
    expect(problems).toEqual(['"b": unknown "type" "x"']);
    expect(parseAuthJson("[]").problems).toEqual(["expected an object of providers"]);
    expect(parseAuthJson("{").problems[0]).toStartWith("not valid JSON");
  });
});

describe("reading several files", () => {
  test("the first file that has a provider wins; a missing file is skipped; a broken one is one warning", () => {
    const dir = mkdtempSync(join(tmpdir(), "auth-file-"));
    const first = join(dir, "first.json");
    const second = join(dir, "second.json");
    const broken = join(dir, "broken.json");
    writeFileSync(first, JSON.stringify({ anthropic: { type: "api_key", key: "one" } }));
    writeFileSync(second, JSON.stringify({ anthropic: { type: "api_key", key: "two" }, openai: { type: "api_key", key: "three" } }));
    writeFileSync(broken, "{");
    const warnings: string[] = [];
    const entries = readAuthFiles([join(dir, "missing.json"), first, broken, second], (l) => void warnings.push(l));
    expect(entries.get("anthropic")).toEqual({ credential: { type: "api_key", key: "one" }, path: first });
    expect(entries.get("openai")?.path).toBe(second);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(broken);
  });
});

test("a file half-written under the reference's lock is read again once the lock is released", () => {
  const dir = mkdtempSync(join(tmpdir(), "auth-file-"));
  const file = join(dir, "auth.json");
  writeFileSync(file, '{"anthropic": {"type": "api_');
  mkdirSync(`${file}.lock`);
  const whole = JSON.stringify({ anthropic: { type: "api_key", key: "k" } });
  Bun.spawn(["sh", "-c", `sleep 0.2; printf '%s' '${whole}' > '${file}'; rmdir '${file}.lock'`]);
  const warnings: string[] = [];
  expect(readAuthFiles([file], (l) => void warnings.push(l)).get("anthropic")?.credential).toEqual({ type: "api_key", key: "k" });
  expect(warnings).toEqual([]);
});
