import { describe, expect, test } from "bun:test";
import { BUILTIN_TOOL_NAMES, createBuiltinTools, DEFAULT_TOOLS, selectTools } from "../../../src/tools/index.ts";
import { startingTools, toolMatcher } from "../../../src/tools/select.ts";
import { context, run, textOf, tmp } from "./harness.ts";

describe("createBuiltinTools", () => {
  test("builds all seven tools with JSON Schemas for the model", () => {
    const tools = createBuiltinTools({ images: true });
    expect([...tools.keys()]).toEqual([...BUILTIN_TOOL_NAMES]);
    for (const [name, tool] of tools) {
      expect(tool.name).toBe(name);
      expect(tool.description.length).toBeGreaterThan(50);
      expect(tool.parameters).toMatchObject({ type: "object" });
      expect(tool.parameters.$schema).toBeUndefined();
    }
    expect(DEFAULT_TOOLS).toEqual(["read", "bash", "edit", "write"]);
  });

  test("a pinned cwd wins over the call's", async () => {
    const dir = tmp();
    const bash = createBuiltinTools({ cwd: dir, images: false }).get("bash");
    if (!bash) throw new Error("bash missing");
    expect(textOf(await run(bash, { command: "pwd" }, context("/")))).toBe(`${dir}\n`);
  });
});

describe("selectTools", () => {
  const defaults = ["read", "bash", "edit", "write"];
  test("undefined or no flags keep the defaults", () => {
    expect(selectTools(undefined, defaults)).toEqual(defaults);
    expect(selectTools([], defaults)).toEqual(defaults);
  });
  test("plain names replace the set", () => {
    expect(selectTools("read,grep", defaults)).toEqual(["read", "grep"]);
    expect(selectTools(["read", "ls"], defaults)).toEqual(["read", "ls"]);
  });
  test("+ adds and - removes", () => {
    expect(selectTools("+grep,-bash", defaults)).toEqual(["read", "edit", "write", "grep"]);
    expect(selectTools(["-write", "+find, +ls"], defaults)).toEqual(["read", "bash", "edit", "find", "ls"]);
    expect(selectTools("read,+find,-read", defaults)).toEqual(["find"]);
  });
  test("an empty string selects nothing", () => {
    expect(selectTools("", defaults)).toEqual([]);
  });
  test("unknown names are named in the error", () => {
    expect(() => selectTools("read,nope,+bogus", defaults)).toThrow('Unknown tools "nope", "+bogus"');
    expect(() => selectTools("+", defaults)).toThrow('Unknown tool "+"');
  });
  test("extra available names can be allowed", () => {
    expect(selectTools("+todo", defaults, [...BUILTIN_TOOL_NAMES, "todo"])).toEqual([...defaults, "todo"]);
  });
});

describe("startingTools and toolMatcher", () => {
  test("--no-tools / --no-builtin-tools empty the defaults and ignore defaultTools; --tools still picks", () => {
    expect(startingTools({}, undefined)).toEqual(["read", "bash", "edit", "write"]);
    expect(startingTools({}, ["+grep"])).toEqual(["read", "bash", "edit", "write", "grep"]);
    expect(startingTools({ tools: "ls" }, ["+grep"])).toEqual(["ls"]);
    expect(startingTools({ noTools: true }, ["+grep"])).toEqual([]);
    expect(startingTools({ noBuiltinTools: true, tools: "+read" }, undefined)).toEqual(["read"]);
    expect(startingTools({ noTools: true, tools: "read,ls" }, undefined)).toEqual(["read", "ls"]);
  });

  test("* matches any run of characters; other characters are literal", () => {
    const m = toolMatcher("mcp__*, write,b.sh");
    expect(["mcp__x__y", "mcp__", "write", "b.sh"].every(m)).toBe(true);
    expect(["bash", "writes", "xmcp__a", "read"].some(m)).toBe(false);
    expect(toolMatcher("*")("anything")).toBe(true);
  });
});
