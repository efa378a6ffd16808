import { describe, expect, test } from "bun:test";
import REFERENCE_EXPORTS from "../../../src/extensions/surface/reference-exports.json" with { type: "json" };
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describeSurface, REFERENCE_PACKAGES } from "../../../src/extensions/surface/export-surface.ts";
import { referenceModules } from "../../../src/extensions/surface/modules.ts";

const REFERENCE = process.env.PION_REFERENCE_PKG;
const GENERATOR = join(import.meta.dir, "../../../src/extensions/surface/gen-reference-exports.ts");

describe("the reference's export surface", () => {
  test("every name of the generated list is exported by pion's module, as the list says", () => {
    const surface = describeSurface(REFERENCE_EXPORTS, referenceModules());
    expect(surface).toEqual(REFERENCE_EXPORTS as typeof surface);
    for (const pkg of REFERENCE_PACKAGES) {
      const mod = referenceModules()[pkg] as Record<string, unknown>;
      for (const name of Object.keys((REFERENCE_EXPORTS as Record<string, object>)[pkg]!)) expect(name in mod).toBe(true);
    }
  });

  (REFERENCE ? test : test.skip)("the list is the installed reference's (regenerate with gen-reference-exports.ts)", async () => {
    const gen = Bun.spawn(["bun", GENERATOR, "--stdout"], { env: { ...process.env, PION_REFERENCE_PKG: REFERENCE! }, stdout: "pipe", stderr: "inherit" });
    expect(JSON.parse(await new Response(gen.stdout).text())).toEqual(REFERENCE_EXPORTS);
  });

  test("SessionManager.open reads a session file; inMemory holds given entries", () => {
    const { SessionManager } = referenceModules()["pi-coding-agent"] as { SessionManager: { open(p: string): Record<string, (...a: unknown[]) => unknown>; inMemory(cwd: string, o?: unknown, e?: unknown[]): Record<string, (...a: unknown[]) => unknown> } };
    const file = join(import.meta.dir, "../../fixtures/reference-v3-compaction.jsonl");
    const lines = readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    const sm = SessionManager.open(file);
    expect(sm.getHeader!()).toEqual(lines[0]);
    expect(sm.getSessionId!()).toBe(lines[0].id);
    expect(sm.getSessionFile!()).toBe(file);
    expect((sm.getEntries!() as unknown[]).length).toBe(lines.length - 1);
    expect(sm.getLeafId!()).toBe(lines.at(-1).id);
    const branch = sm.getBranch!() as { id: string; parentId: string | null }[];
    expect(branch[0]!.parentId).toBeNull();
    expect(branch.at(-1)!.id).toBe(lines.at(-1).id);
    const mem = SessionManager.inMemory("/w", undefined, [{ type: "message", id: "a", parentId: null }]);
    expect([mem.getCwd!(), mem.getLeafId!(), mem.isPersisted!()]).toEqual(["/w", "a", false]);
  });

  test("helpers behave as the reference's: front matter, thinking levels, key hints; runRpcMode refuses where pion owns stdio", async () => {
    const ca = referenceModules()["pi-coding-agent"] as Record<string, (...a: unknown[]) => unknown>;
    expect(ca.parseFrontmatter!("---\nname: x\ncount: 3\ntags: [a, b]\n---\nbody\n")).toEqual({ frontmatter: { name: "x", count: 3, tags: ["a", "b"] }, body: "body\n" });
    expect(ca.stripFrontmatter!("---\na: 1\n---\nrest")).toBe("rest");
    expect(ca.parseFrontmatter!("no block")).toEqual({ frontmatter: {}, body: "no block" });
    const ai = referenceModules()["pi-ai"] as Record<string, (...a: unknown[]) => unknown>;
    expect(ai.clampThinkingLevel!({ reasoning: false }, "high")).toBe("off");
    expect(ai.clampThinkingLevel!({ reasoning: true, thinkingLevelMap: { minimal: null } }, "minimal")).toBe("low");
    expect(ai.clampThinkingLevel!({ reasoning: true, thinkingLevelMap: {} }, "max")).toBe("high");
    expect(ca.keyHint!("app.tools.expand", "to expand")).toBe("app.tools.expand to expand");
    await expect(ca.runRpcMode!()).rejects.toThrow("runRpcMode cannot run here");
    const Tui = (referenceModules()["pi-tui"] as Record<string, new (...a: unknown[]) => { render(w: number): string[] }>).Markdown!;
    expect(new Tui("# x").render(80)).toEqual([]);
  });
});

describe("the reference version", () => {
  (REFERENCE ? test : test.skip)("PI_AI_VERSION is the installed reference's, whose surface the list describes", async () => {
    const pkg = JSON.parse(readFileSync(join(REFERENCE!, "package.json"), "utf8")) as { version: string };
    expect((referenceModules()["pi-ai"] as { PI_AI_VERSION: string }).PI_AI_VERSION).toBe(pkg.version);
  });
});
