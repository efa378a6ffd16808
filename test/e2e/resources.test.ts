import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeProvider } from "../support/fake-provider.ts";
import { Pion, tempDirs, writeFakeModels, type Rec } from "../support/pion.ts";

function write(path: string, text: string) {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
}

describe("skills, prompt templates, context files", () => {
  test.concurrent("expansions reach the model; context files are in the system prompt; get_commands lists them", async () => {
    const fake = startFakeProvider();
    const { home, cwd } = tempDirs();
    writeFakeModels(home, fake.url);
    write(join(home, "AGENTS.md"), "Global rule: be kind.");
    write(join(cwd, "AGENTS.md"), "Project rule: tabs not spaces.");
    write(join(home, "skills", "deploy", "SKILL.md"), "---\nname: deploy\ndescription: Deploy the app safely\n---\nRun make deploy, then check health.");
    write(join(cwd, ".pion", "skills", "Bad Name", "SKILL.md"), "---\nname: Bad Name\ndescription: x\n---\nbody");
    write(join(cwd, ".pion", "prompts", "review.md"), "---\ndescription: Review a file\n---\nReview $1 focusing on $2. All: $ARGUMENTS");
    const p = new Pion({ home, cwd, args: ["--mode", "rpc", "--approve", "--model", "fake/fake-model", "--append-system-prompt", "APPENDED-TEXT"] });
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] }, { blocks: [{ type: "text", text: "ok" }] });
    await p.request({ type: "prompt", message: '/review src/a.ts "error handling"' });
    await p.waitFor("agent_settled");
    await p.request({ type: "prompt", message: "/skill:deploy to staging" });
    await p.waitFor((r) => r.type === "agent_settled", p.records.findIndex((r) => r.type === "agent_settled") + 1);
    const b0 = fake.requests[0]!.body as { system: { text: string }[]; messages: { content: Rec[] }[] };
    expect(b0.messages[0]!.content[0]!.text).toBe("Review src/a.ts focusing on error handling. All: src/a.ts error handling");
    const system = b0.system[0]!.text;
    expect(system).toContain("Global rule: be kind.");
    expect(system).toContain("Project rule: tabs not spaces.");
    expect(system.indexOf("Global rule")).toBeLessThan(system.indexOf("Project rule"));
    expect(system).toContain("deploy");
    expect(system).toContain("Deploy the app safely");
    expect(system.trim().endsWith("APPENDED-TEXT")).toBe(true);
    const b1 = fake.requests[1]!.body as { messages: { content: Rec[] }[] };
    const skillText = b1.messages.at(-1)!.content[0]!.text as string;
    expect(skillText).toContain("Run make deploy, then check health.");
    expect(skillText).toContain("to staging");
    const cmds = (await p.request({ type: "get_commands" })).data.commands;
    expect(cmds.map((c: Rec) => [c.name, c.source, c.location])).toEqual([
      // The built-in commands (/llama, /mcp) come first, as the reference's built-in extensions.
      ["llama", "extension", undefined],
      ["mcp", "extension", undefined],
      ["review", "prompt", "project"],
      ["skill:deploy", "skill", "user"],
    ]);
    expect(cmds[2]).toMatchObject({ description: "Review a file", path: join(cwd, ".pion", "prompts", "review.md") });
    await p.close();
    expect(p.stderr).toContain("Bad Name");
    await fake.stop();
  });

  test.concurrent("--system-prompt replaces the base text", async () => {
    const fake = startFakeProvider();
    const { home, cwd } = tempDirs();
    writeFakeModels(home, fake.url);
    const p = new Pion({ home, cwd, args: ["--mode", "rpc", "--model", "fake/fake-model", "--system-prompt", "You are a pirate."] });
    fake.enqueue({ blocks: [{ type: "text", text: "arr" }] });
    await p.request({ type: "prompt", message: "hi" });
    await p.waitFor("agent_settled");
    const system = (fake.requests[0]!.body as { system: { text: string }[] }).system[0]!.text;
    expect(system.startsWith("You are a pirate.")).toBe(true);
    expect(system).toContain(cwd);
    await p.close();
    await fake.stop();
  });
});
