import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServerLog } from "../../../src/mcp/server-log.ts";

describe("mcp.log", () => {
  test("one masked line per notification; past the limit the file moves to mcp.log.1", () => {
    const path = join(mkdtempSync(join(tmpdir(), "pion-mcp-log-")), "mcp.log");
    const write = createServerLog(path, (s) => s.replaceAll("s3cret", "[redacted]"), 200);
    write("docs", { level: "info", logger: "search", data: "indexed s3cret\nfiles" });
    write("docs", { level: "error", data: { code: 5 } });
    const lines = readFileSync(path, "utf8").trim().split("\n");
    expect(lines[0]).toMatch(/^\S+Z \[docs\] info search: indexed \[redacted\]\\nfiles$/);
    expect(lines[1]).toMatch(/\[docs\] error -: \{"code":5\}$/);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    for (let i = 0; i < 5; i++) write("docs", { level: "debug", data: "x".repeat(40) });
    expect(existsSync(`${path}.1`)).toBe(true);
    expect(statSync(path).size).toBeLessThanOrEqual(200);
  });
});
