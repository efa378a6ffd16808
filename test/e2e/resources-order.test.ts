import { expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { Pion, tempDirs, type Rec } from "../support/pion.ts";
import { NO_REFERENCE, referenceRpc, type RpcAgent } from "../support/reference-rpc.ts";
import { describeWith } from "../support/requires.ts";

/**
 * Skills and prompt templates load in the reference's order, which is their precedence (the first
 * of a name wins): `-e` packages', the trusted project's settings paths and folders, the user's
 * settings paths and folders (`~/.agents/skills` too), the project's and the user's packages, then
 * `--skill` / `--prompt-template` paths. get_commands lists them in that order with the
 * reference's `sourceInfo`, and `--no-skills` keeps only the `-e` packages' and the command line's.
 */
function write(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

/** One resource per folder (a folder's own order is the file system's in the reference, by name in pion), plus name clashes across folders. */
function tree(home: string, cwd: string): { root: string; args: string[] } {
  const root = dirname(home);
  const skill = (dir: string, name: string) => write(join(root, dir, name, "SKILL.md"), `---\nname: ${name}\ndescription: ${name} in ${dir}\n---\nbody\n`);
  const prompt = (dir: string, name: string) => write(join(root, dir, `${name}.md`), `---\ndescription: ${name} in ${dir}\n---\nhello\n`);
  mkdirSync(join(cwd, ".git"), { recursive: true });
  skill("home/skills", "user-auto");
  skill("home/.agents/skills", "user-agents");
  skill("project/.pi/skills", "dup");
  skill("project/.agents/skills", "project-agents");
  skill("ulisted", "dup");
  skill("plisted", "project-listed");
  skill("upkg/skills", "user-package");
  skill("ppkg/skills", "project-package");
  skill("clipkg/skills", "cli-package");
  skill("cli", "dup");
  skill("cli2", "cli-only");
  prompt("home/prompts", "pdup");
  prompt("project/.pi/prompts", "project-auto");
  prompt("ulisted-p", "user-listed");
  prompt("plisted-p", "pdup");
  prompt("upkg/prompts", "user-package-p");
  prompt("ppkg/prompts", "project-package-p");
  prompt("clipkg/prompts", "pdup");
  prompt("clip", "cli-prompt");
  for (const pkg of ["upkg", "ppkg", "clipkg"]) write(join(root, pkg, "package.json"), JSON.stringify({ name: pkg, version: "1.0.0" }));
  write(join(home, "settings.json"), JSON.stringify({ skills: [join(root, "ulisted")], prompts: [join(root, "ulisted-p")], packages: [join(root, "upkg")] }));
  write(join(cwd, ".pi", "settings.json"), JSON.stringify({ skills: [join(root, "plisted")], prompts: [join(root, "plisted-p")], packages: [join(root, "ppkg")] }));
  return { root, args: ["-e", join(root, "clipkg"), "--skill", join(root, "cli"), "--skill", join(root, "cli2"), "--prompt-template", join(root, "clip")] };
}

async function listed(agent: RpcAgent, root: string): Promise<string[]> {
  const commands = ((await agent.request({ type: "get_commands" })) as { data: { commands: Rec[] } }).data.commands;
  return commands
    .filter((c) => c.source === "skill" || c.source === "prompt")
    .map((c) => JSON.stringify([c.source, c.name, c.description, c.sourceInfo]).replaceAll(root, "<root>"));
}

describeWith("skills and prompt templates, pion against the reference", NO_REFERENCE, () => {
  for (const extra of [[], ["--no-skills", "--no-prompt-templates"]]) {
    test(`the same order, winners of clashing names and sourceInfo (${extra.join(" ") || "discovery on"})`, async () => {
      const run = async (which: "pion" | "reference") => {
        const dirs = tempDirs();
        const { root, args } = tree(dirs.home, dirs.cwd);
        const all = ["--mode", "rpc", "--no-session", "--approve", ...args, ...extra];
        const agent: RpcAgent = which === "pion" ? new Pion({ ...dirs, args: all, env: { HOME: dirs.home } }) : referenceRpc(all, dirs, {});
        try {
          return await listed(agent, root);
        } finally {
          await agent.close();
        }
      };
      const [mine, theirs] = await Promise.all([run("pion"), run("reference")]);
      expect(theirs.length).toBeGreaterThan(extra.length ? 3 : 12);
      expect(mine).toEqual(theirs);
    }, 60_000);
  }
});

test.concurrent("the first skill of a name wins: a project's over the user's and the command line's, and the losers are named on stderr", async () => {
  const dirs = tempDirs();
  const { root, args } = tree(dirs.home, dirs.cwd);
  const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--no-session", "--approve", ...args], env: { HOME: dirs.home } });
  const names = (await listed(p, root)).map((l) => JSON.parse(l) as [string, string, string]);
  expect(names.find((n) => n[1] === "skill:dup")![2]).toBe("dup in project/.pi/skills");
  expect(names.find((n) => n[1] === "pdup")![2]).toBe("pdup in clipkg/prompts");
  expect(names[0]![1]).toBe("pdup");
  await p.close();
  expect(p.stderr).toContain(`Skill "dup" at ${join(root, "cli", "dup", "SKILL.md")} is left out`);
});
