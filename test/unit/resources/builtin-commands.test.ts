import { expect, test } from "bun:test";
import { builtinCommands, enabledBySettings } from "../../../src/resources/builtin-commands.ts";
import type { ListedEntry } from "../../../src/settings-files.ts";

const user = (...entries: string[]): ListedEntry[] => entries.map((entry) => ({ entry, base: "/h", level: "user" }));
const project = (...entries: string[]): ListedEntry[] => entries.map((entry) => ({ entry, base: "/p/.pion", level: "project" }));
const names = (o: Parameters<typeof builtinCommands>[0]) => {
  const r = builtinCommands(o);
  return { first: r.first.map((c) => c.name), last: r.last.map((c) => c.name), unknown: r.unknown };
};

test("both on by default, in the reference's order, with its records", () => {
  expect(builtinCommands({}).last).toEqual([
    { name: "llama", description: "Manage llama.cpp router models", source: "extension", path: "builtin:llama.cpp", sourceInfo: { path: "builtin:llama.cpp", source: "builtin", scope: "temporary", origin: "top-level" } },
    { name: "mcp", description: "Manage MCP servers: sign in, reconnect, enable or disable, and change exposure", source: "extension", path: "builtin:mcp", sourceInfo: { path: "builtin:mcp", source: "builtin", scope: "temporary", origin: "top-level" } },
  ]);
});

test("--no-extensions drops them unless -e names one; --no-mcp drops /mcp whatever -e says", () => {
  expect(names({ noExtensions: true })).toEqual({ first: [], last: [], unknown: [] });
  expect(names({ noExtensions: true, cliExtensions: ["./x.ts", "builtin:mcp"] })).toEqual({ first: ["mcp"], last: [], unknown: [] });
  expect(names({ noMcp: true, cliExtensions: ["builtin:mcp"] })).toEqual({ first: [], last: ["llama"], unknown: [] });
  expect(names({ cliExtensions: ["builtin:codemode", "builtin:nope"] })).toEqual({ first: [], last: ["llama", "mcp"], unknown: ["builtin:nope"] });
});

test("settings: the user's -name or !glob switch one off; a project's matching entry decides instead", () => {
  expect(enabledBySettings("mcp", user("-builtin:mcp"))).toBe(false);
  expect(enabledBySettings("llama.cpp", user("-builtin:mcp"))).toBe(true);
  expect(enabledBySettings("mcp", user("!builtin:*"))).toBe(false);
  expect(enabledBySettings("mcp", user("!builtin:*", "+builtin:mcp"))).toBe(true);
  expect(enabledBySettings("mcp", [...user("-builtin:mcp"), ...project("builtin:mcp")])).toBe(true);
  expect(enabledBySettings("mcp", [...user("builtin:mcp"), ...project("!builtin:*")])).toBe(false);
  expect(names({ listed: user("-builtin:mcp") })).toEqual({ first: [], last: ["llama"], unknown: [] });
});
