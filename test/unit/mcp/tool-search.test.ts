import { describe, expect, test } from "bun:test";
import type { Entry } from "../../../src/store/entries.ts";
import { createToolSearchTool, loadedOnBranch, rankTools, searchDoc, words } from "../../../src/mcp/tool-search.ts";

const doc = (name: string, description: string, server = "") => searchDoc({ name, description, parameters: { type: "object", properties: {} } }, server);

describe("tool_search ranking", () => {
  const docs = [
    doc("mcp__gh__list_issues", "List the issues of a repository"),
    doc("mcp__gh__create_issue", "Open a new issue in a repository"),
    doc("mcp__gh__get_file", "Read a file of a repository, mentions issues and issues and issues"),
    doc("mcp__shot__window", "The title of the front app"),
    doc("mcp__shot__capture", "Capture a screenshot of a window"),
    doc("mcp__db__query", "Run SQL", "db Postgres database of the billing service"),
  ];

  test("words split identifiers, drop stop words and plural endings", () => {
    expect(words("listIssues of the get-file_names")).toEqual(["list", "issue", "get", "file", "name"]);
  });

  test("a name match beats mentions; more matched words beat fewer; an exact name comes first; the server's text counts", () => {
    expect(rankTools("issues", docs, 3).map((d) => d.name).slice(0, 2).sort()).toEqual(["mcp__gh__create_issue", "mcp__gh__list_issues"]);
    expect(rankTools("screenshot window", docs, 2)[0]!.name).toBe("mcp__shot__capture");
    expect(rankTools("create_issue", docs, 1)[0]!.name).toBe("mcp__gh__create_issue");
    expect(rankTools("billing", docs, 5).map((d) => d.name)).toEqual(["mcp__db__query"]);
    expect(rankTools("the", docs, 5)).toEqual([]);
  });

  test("schema property names and descriptions are searched", () => {
    const d = searchDoc({ name: "mcp__x__run", description: "Run it", parameters: { type: "object", properties: { timezone: { type: "string", description: "an IANA zone" } } } }, "x");
    expect(rankTools("timezone", [d, doc("mcp__x__other", "Other")], 5).map((x) => x.name)).toEqual(["mcp__x__run"]);
  });

  test("the tool loads matches into its result's details; the branch's results say what is loaded", async () => {
    const tool = createToolSearchTool(() => docs, async () => {});
    const args = await tool.parse({ query: "issue", limit: 2 });
    const r = await tool.execute(args, { signal: new AbortController().signal, callId: "c", cwd: "/" });
    expect((r.details as { loaded: string[] }).loaded).toHaveLength(2);
    expect(() => tool.parse({ query: " " })).toThrow("query");
    expect(() => tool.parse({ query: "x", limit: 0 })).toThrow("limit");
    const entry = (id: string, toolName: string, loaded: string[]): Entry =>
      ({ type: "message", id, parentId: null, timestamp: "", message: { role: "toolResult", toolCallId: id, toolName, content: [], details: { loaded }, isError: false, timestamp: 0 } }) as Entry;
    expect(loadedOnBranch([entry("a", "tool_search", ["t1", "t2"]), entry("b", "bash", ["no"]), entry("c", "tool_search", ["t2", "t3"])])).toEqual(["t1", "t2", "t3"]);
  });
});
