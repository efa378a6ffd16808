import { describe, expect, test } from "bun:test";
import { configValueEnvNames, resolveConfigValue, soleEnvName } from "../../../src/credentials/config-value.ts";

describe("config values ($NAME, ${NAME}, !command, escapes)", () => {
  const env = { TOK: "t0k", ORG: "acme", EMPTY: "" };
  test("templates fill in variables and escapes", () => {
    expect(resolveConfigValue("plain", env)).toBe("plain");
    expect(resolveConfigValue("$TOK", env)).toBe("t0k");
    expect(resolveConfigValue("Bearer ${TOK}-$ORG", env)).toBe("Bearer t0k-acme");
    expect(resolveConfigValue("cost $$5 and $!bang", env)).toBe("cost $5 and !bang");
    expect(resolveConfigValue("${not a name}", env)).toBe("${not a name}");
    expect(resolveConfigValue("trailing $", env)).toBe("trailing $");
  });
  test("a missing or empty variable leaves the value unresolved", () => {
    expect(resolveConfigValue("$NOPE", env)).toBeUndefined();
    expect(resolveConfigValue("x-$EMPTY", env)).toBeUndefined();
  });
  test("commands: stdout trimmed; failure, empty output and timeouts resolve to nothing", () => {
    expect(resolveConfigValue("!printf ' %s \\n' \"$TOK\"", env)).toBe("t0k");
    expect(resolveConfigValue("!exit 3", env)).toBeUndefined();
    expect(resolveConfigValue("!true", env)).toBeUndefined();
    expect(resolveConfigValue("!read x && echo got$x", env, { cache: false })).toBeUndefined();
  });
  test("a command runs once per process when cached", () => {
    const a = resolveConfigValue("!cat /proc/sys/kernel/random/uuid", { PATH: process.env.PATH });
    expect(resolveConfigValue("!cat /proc/sys/kernel/random/uuid", { PATH: process.env.PATH })).toBe(a!);
    const b = resolveConfigValue("!cat /proc/sys/kernel/random/uuid", { PATH: process.env.PATH }, { cache: false });
    const c = resolveConfigValue("!cat /proc/sys/kernel/random/uuid", { PATH: process.env.PATH }, { cache: false });
    expect(b).not.toBe(c!);
  });
  test("the variables a value names", () => {
    expect(configValueEnvNames("a $X ${Y} $$Z")).toEqual(["X", "Y"]);
    expect(configValueEnvNames("!vault read $VAULT_PATH")).toEqual(["VAULT_PATH"]);
    expect(soleEnvName("$X")).toBe("X");
    expect(soleEnvName("${X}")).toBe("X");
    expect(soleEnvName("Bearer $X")).toBeUndefined();
  });
});
