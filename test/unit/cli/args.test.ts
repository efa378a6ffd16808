import { describe, expect, test } from "bun:test";
import { closest, finalizeArgs, FLAGS, parseArgs, UsageError } from "../../../src/cli/args.ts";

const REFERENCE_OPTIONS = [
  // Every option of the reference's docs/cli.md, long and short.
  "-p", "--print", "--mode", "--export", "--provider", "--model", "--api-key", "--thinking", "--models", "--list-models",
  "-c", "--continue", "-r", "--resume", "--session", "--session-id", "--fork", "--session-dir", "--no-session", "-n", "--name",
  "-t", "--tools", "-xt", "--exclude-tools", "-nbt", "--no-builtin-tools", "-nt", "--no-tools", "-e", "--extension",
  "-ne", "--no-extensions", "--no-mcp", "--skill", "-ns", "--no-skills", "--prompt-template", "-np", "--no-prompt-templates",
  "--theme", "--use-theme", "--no-themes", "-nc", "--no-context-files", "--system-prompt", "--append-system-prompt",
  "--tui-mode", "--verbose", "-a", "--approve", "-na", "--no-approve", "--offline", "-h", "--help", "-v", "--version",
];

const fails = (argv: string[]) => {
  try {
    parseArgs(argv);
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as Error).message;
  }
  throw new Error(`accepted: ${argv.join(" ")}`);
};

describe("parseArgs", () => {
  test("knows every option of the reference's CLI, with the same argument shape", () => {
    const spelled = new Set(Object.entries(FLAGS).flatMap(([name, def]) => [`--${name}`, ...("short" in def ? [`-${def.short}`] : [])]));
    expect(REFERENCE_OPTIONS.filter((o) => !spelled.has(o))).toEqual([]);
    // the reference's 41, pion's run limits --max-turns / --max-cost, tool permissions --permission-mode, --allow, --deny, and --sandbox
    expect(new Set(Object.keys(FLAGS)).size).toBe(47);
    expect(FLAGS["max-turns"].kind).toBe("string");
    expect(FLAGS["max-cost"].kind).toBe("string");
  });

  test("tool permissions: --permission-mode takes a value, --allow and --deny repeat", () => {
    const r = parseArgs(["--permission-mode", "ask", "--allow", "bash(git status*)", "--allow=read", "--deny", "bash(rm *)"]);
    expect(r.values).toEqual({ "permission-mode": "ask", allow: ["bash(git status*)", "read"], deny: ["bash(rm *)"] });
  });

  test("values, short forms, repeatable lists and --name=value", () => {
    const r = parseArgs(["-t", "read", "-xt=bash", "-nbt", "--append-system-prompt", "a", "--append-system-prompt", "b", "-e", "x.ts", "--", "-not-a-flag"]);
    expect(r.values).toEqual({ tools: "read", "exclude-tools": "bash", "no-builtin-tools": true, "append-system-prompt": ["a", "b"], extension: ["x.ts"] });
    expect(r.positionals).toEqual(["-not-a-flag"]);
  });

  test("--list-models takes a search word only when one follows", () => {
    expect(parseArgs(["--list-models"]).values["list-models"]).toBe(true);
    expect(parseArgs(["--list-models", "son"]).values["list-models"]).toBe("son");
    expect(parseArgs(["--list-models", "--offline"]).values).toEqual({ "list-models": true, offline: true });
    expect(parseArgs(["--list-models", "@file"]).values["list-models"]).toBe(true);
  });

  test("a value may start with a dash unless it is an option", () => {
    expect(parseArgs(["--system-prompt", "-be terse"]).values["system-prompt"]).toBe("-be terse");
    expect(fails(["--model", "--offline"])).toBe("Option --model needs a value");
    expect(fails(["--model"])).toBe("Option --model needs a value");
    expect(fails(["--offline=1"])).toBe("Option --offline takes no value");
  });

  test("unknown long options wait for extensions; unknown short ones fail at once", () => {
    expect(parseArgs(["--plan", "--target", "prod"])).toMatchObject({ pending: ["--plan", "--target"], positionals: ["prod"] });
    expect(fails(["-zz"])).toBe("Unknown option: -zz");
    expect(fails(["-xtt"])).toBe("Unknown option: -xtt (did you mean -xt?)");
  });

  test("the combinations the reference rejects", () => {
    expect(fails(["--fork", "a", "--session", "b"])).toBe("--fork cannot be combined with --session");
    expect(fails(["--fork", "a", "-c", "-r", "--no-session"])).toBe("--fork cannot be combined with --continue, --resume, --no-session");
    expect(fails(["--session-id", "a", "--session", "b", "-c"])).toBe("--session-id cannot be combined with --session, --continue");
    expect(parseArgs(["--fork", "a", "--session-id", "b"]).values).toEqual({ fork: "a", "session-id": "b" });
    expect(parseArgs(["--session-id", "x", "--no-session"]).values).toEqual({ "session-id": "x", "no-session": true });
  });

  test("session ids: letters, digits, . _ -, alphanumeric at both ends", () => {
    for (const ok of ["a", "A1", "run.2_b-c", "0"]) expect(parseArgs(["--session-id", ok]).values["session-id"]).toBe(ok);
    for (const bad of ["-a", "a-", ".a", "a b", "a/b", "é"]) expect(fails([`--session-id=${bad}`])).toStartWith("Invalid --session-id");
  });
});

describe("finalizeArgs", () => {
  const extra = [
    { name: "plan", type: "boolean" as const },
    { name: "target", type: "string" as const },
  ];
  test("extension flags take their values; the rest parses as in the first pass", () => {
    const r = finalizeArgs(["--plan", "--target", "prod", "-n", "x", "prompt"], extra);
    expect(r).toEqual({ values: { name: "x" }, positionals: ["prompt"], pending: [], extensionFlags: { plan: true, target: "prod" } });
    expect(finalizeArgs(["--target=a=b"], extra).extensionFlags).toEqual({ target: "a=b" });
  });

  test("what no extension registered is unknown, with the nearest flag suggested", () => {
    expect(() => finalizeArgs(["--tagret", "x"], extra)).toThrow("Unknown option: --tagret (did you mean --target?)");
    expect(() => finalizeArgs(["--no-theme"], [])).toThrow("Unknown option: --no-theme (did you mean --no-themes?)");
    expect(() => finalizeArgs(["--zzzzzzzz"], [])).toThrow(/^Unknown option: --zzzzzzzz$/);
    expect(() => finalizeArgs(["--target"], extra)).toThrow("Option --target needs a value");
    expect(() => finalizeArgs(["--target", "--plan"], extra)).toThrow("Option --target needs a value");
    expect(() => finalizeArgs(["--plan=1"], extra)).toThrow("Option --plan takes no value");
  });

  test("an extension cannot take over a built-in flag", () => {
    expect(finalizeArgs(["--model", "m"], [{ name: "model", type: "boolean" }])).toMatchObject({ values: { model: "m" }, extensionFlags: {} });
  });
});

test("closest", () => {
  expect(closest("--modle", ["--model", "--mode"])).toBe("--mode");
  expect(closest("--session-di", ["--session-dir", "--session"])).toBe("--session-dir");
  expect(closest("--xyz", ["--session-dir"])).toBeUndefined();
});
