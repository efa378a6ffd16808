import { expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { startFakeProvider, type FakeApi, type FakeReply } from "../support/fake-provider.ts";
import { compareShapes, describeDifference, documents, parseDifferencesTable, type ShapeDifference } from "../support/key-paths.ts";
import { runPion, tempDirs, writeFakeModels, type Rec } from "../support/pion.ts";
import { describeWith } from "../support/requires.ts";

/**
 * The same scenarios through pion and through the reference agent, each in `--mode json` against
 * its own fake provider, for every provider API; the nested key paths of their records compared
 * kind by kind in order. Every difference must be a row of the table in
 * docs/reference-differences.md, and every row must still occur, so the doc stays true.
 */
const REFERENCE = process.env.PION_REFERENCE_PKG;
const CLI = REFERENCE ? join(REFERENCE, "dist/cli.js") : "";
const missing = !REFERENCE ? "PION_REFERENCE_PKG (the folder of @earendil-works/pi-coding-agent) is not set" : existsSync(CLI) ? undefined : `${CLI} does not exist`;
const DOC = resolve(import.meta.dir, "../../docs/reference-differences.md");

/** The models.json provider and model writeFakeModels gives each API. */
type SharedApi = "anthropic-messages" | "openai-completions" | "openai-responses";
const MODELS: Record<SharedApi, [provider: string, model: string]> = {
  "anthropic-messages": ["fake", "fake-model"],
  "openai-completions": ["fake-openai", "fake-chat"],
  "openai-responses": ["fake-responses", "fake-resp"],
};
const APIS = Object.keys(MODELS) as SharedApi[];

interface Scenario {
  name: string;
  replies: () => FakeReply[];
  files?: Record<string, string>;
}
const SCENARIOS: Scenario[] = [
  {
    name: "text with usage",
    replies: () => [{ blocks: [{ type: "text", text: ["Hel", "lo"] }], usage: { input: 40, output: 7, cacheRead: 20, cacheWrite: 10 } }],
  },
  {
    name: "bash, then text",
    replies: () => [
      { blocks: [{ type: "text", text: "Running it." }, { type: "toolCall", name: "bash", arguments: { command: "echo hi" } }] },
      { blocks: [{ type: "text", text: "It said hi." }] },
    ],
  },
  {
    name: "read, then text",
    files: { "notes.txt": "line one\nline two\n" },
    replies: () => [{ blocks: [{ type: "toolCall", name: "read", arguments: { path: "notes.txt" } }] }, { blocks: [{ type: "text", text: "Two lines." }] }],
  },
  {
    name: "write and edit, then text",
    files: { "notes.txt": "line one\nline two\nline three\n" },
    replies: () => [
      {
        blocks: [
          { type: "toolCall", name: "write", arguments: { path: "made.txt", content: "made\n" } },
          { type: "toolCall", name: "edit", arguments: { path: "notes.txt", edits: [{ oldText: "line two", newText: "line 2" }] } },
        ],
      },
      { blocks: [{ type: "text", text: "Done." }] },
    ],
  },
  {
    name: "HTTP 400",
    replies: () => [{ kind: "http_error", status: 400, message: "bad request", errorType: "invalid_request_error" }],
  },
];

const lines = (out: string): Rec[] => out.split("\n").filter(Boolean).map((l) => JSON.parse(l) as Rec);

/** One agent through one scenario, with its own fake provider, home and cwd. */
async function run(agent: "pion" | "reference", api: SharedApi, s: Scenario): Promise<Rec[]> {
  const fake = startFakeProvider({ replies: s.replies() });
  const dirs = tempDirs();
  for (const [name, text] of Object.entries(s.files ?? {})) writeFileSync(join(dirs.cwd, name), text);
  const [provider, model] = MODELS[api];
  let stdout: string;
  let stderr: string;
  if (agent === "pion") {
    writeFakeModels(dirs.home, fake.url);
    ({ stdout, stderr } = await runPion(["--mode", "json", "--model", `${provider}/${model}`, "Go"], dirs));
  } else {
    const refDir = join(dirs.home, "ref-agent");
    mkdirSync(refDir, { recursive: true });
    writeFakeModels(refDir, fake.url);
    // async: the fake provider answers from this process's event loop
    const proc = Bun.spawn([process.execPath, CLI, "--mode", "json", "--provider", provider, "--model", model, "Go"], {
      cwd: dirs.cwd,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dirs.home, PI_CODING_AGENT_DIR: refDir, PI_OFFLINE: "1", PI_SKIP_VERSION_CHECK: "1", PI_TELEMETRY: "0" },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  }
  await fake.stop();
  if (fake.failures.length > 0 || fake.remaining > 0) {
    throw new Error(`${agent}, ${api}, ${s.name}: the fake provider was not used as scripted (${fake.failures.join("; ") || `${fake.remaining} replies left`})\n${stderr.slice(-1000)}`);
  }
  const recs = lines(stdout);
  if (recs[0]?.type !== "session") throw new Error(`${agent}, ${api}, ${s.name}: no session header first\n${stderr.slice(-1000)}`);
  return recs;
}

interface Outcome {
  api: SharedApi;
  scenario: string;
  differences: ShapeDifference[];
  order: string[];
}
let outcomes: Promise<Outcome[]> | undefined;
/** Every API and scenario, both agents, all at once; computed once for the tests below. */
const allOutcomes = (): Promise<Outcome[]> =>
  (outcomes ??= Promise.all(
    APIS.flatMap((api) =>
      SCENARIOS.map(async (s) => {
        const [mine, theirs] = await Promise.all([run("pion", api, s), run("reference", api, s)]);
        return { api, scenario: s.name, ...compareShapes(mine, theirs) };
      }),
    ),
  ));

describeWith("nested record shapes, pion against the reference", missing, () => {
  const rows = parseDifferencesTable(readFileSync(DOC, "utf8"), APIS);

  test("every scenario streams its records in the reference's order", async () => {
    const problems = (await allOutcomes()).flatMap((o) => o.order.map((x) => `${o.api}, ${o.scenario}: ${x}`));
    expect(problems).toEqual([]);
  }, 60_000);

  test("every difference in key paths is a row of docs/reference-differences.md", async () => {
    // One line per difference, naming where it occurs: "message_end:assistant message.x: ... in openai-completions (text with usage), ..."
    const undocumented = new Map<string, string[]>();
    for (const o of await allOutcomes()) {
      for (const d of o.differences) {
        if (rows.some((r) => documents(r, o.api, d))) continue;
        const key = describeDifference(d);
        undocumented.set(key, [...(undocumented.get(key) ?? []), `${o.api} (${o.scenario})`]);
      }
    }
    expect([...undocumented].map(([d, where]) => `${d} in ${where.join(", ")}`)).toEqual([]);
  }, 60_000);

  test("every row of docs/reference-differences.md still occurs with each API it names", async () => {
    const all = await allOutcomes();
    const stale = rows.flatMap((r) =>
      r.apis
        .filter((api) => !all.some((o) => o.api === api && o.differences.some((d) => documents(r, api, d))))
        .map((api) => `line ${r.line} (${r.kind} ${r.path}) does not occur with ${api}`),
    );
    expect(stale).toEqual([]);
  }, 60_000);

  test("the edit tool's details are the reference's: numbered diff, unified patch, first changed line", async () => {
    const s = SCENARIOS.find((x) => x.name === "write and edit, then text")!;
    const details = (recs: Rec[]) => recs.find((r) => r.type === "tool_execution_end" && r.toolName === "edit")?.result?.details;
    const [mine, theirs] = await Promise.all([run("pion", "anthropic-messages", s), run("reference", "anthropic-messages", s)]);
    expect(details(theirs)).toMatchObject({ diff: expect.any(String), patch: expect.any(String), firstChangedLine: 2 });
    expect(details(mine)).toEqual(details(theirs));
  }, 60_000);
});
