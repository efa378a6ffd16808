import { describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { loadContextFiles } from "../../../src/resources/context-files.ts";
import { tmp, writeTree } from "./helpers.ts";

/** Only files under `base`: whatever sits above the temp folder on this machine is not the test's business. */
const under = (base: string, files: { path: string; content: string }[]) => files.filter((f) => f.path.startsWith(`${base}/`));

describe("loadContextFiles", () => {
  test.concurrent("PION_HOME first, then root to cwd, with CLAUDE.md only where AGENTS.md is absent", () => {
    const base = tmp();
    writeTree(base, {
      "home/AGENTS.md": "user rules",
      "home/CLAUDE.md": "ignored: AGENTS.md is present",
      "work/CLAUDE.md": "work rules",
      "work/repo/AGENTS.md": "repo rules",
      "work/repo/CLAUDE.md": "ignored too",
      "work/repo/pkg/other/AGENTS.md": "not on the path",
    });
    const cwd = join(base, "work/repo/pkg");
    mkdirSync(cwd, { recursive: true });
    expect(under(base, loadContextFiles({ home: join(base, "home"), cwd }))).toEqual([
      { path: join(base, "home/AGENTS.md"), content: "user rules" },
      { path: join(base, "work/CLAUDE.md"), content: "work rules" },
      { path: join(base, "work/repo/AGENTS.md"), content: "repo rules" },
    ]);
  });

  test.concurrent("a folder that is both PION_HOME and on the path is read once", () => {
    const base = tmp();
    writeTree(base, { "proj/AGENTS.md": "once" });
    const cwd = join(base, "proj");
    expect(under(base, loadContextFiles({ home: cwd, cwd }))).toEqual([{ path: join(cwd, "AGENTS.md"), content: "once" }]);
  });

  test.concurrent("a folder named AGENTS.md does not count, and no files means none loaded", () => {
    const base = tmp();
    mkdirSync(join(base, "proj/AGENTS.md"), { recursive: true });
    writeTree(base, { "proj/CLAUDE.md": "fallback" });
    const files = under(base, loadContextFiles({ home: join(base, "missing-home"), cwd: join(base, "proj") }));
    expect(files).toEqual([{ path: join(base, "proj/CLAUDE.md"), content: "fallback" }]);
    expect(under(base, loadContextFiles({ home: join(base, "x"), cwd: base }))).toEqual([]);
  });
});
