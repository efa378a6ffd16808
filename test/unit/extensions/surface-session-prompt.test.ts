import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeProvider } from "../../support/fake-provider.ts";
import { referenceModules } from "../../../src/extensions/surface/modules.ts";

/** An in-process session's system prompt lists its resource loader's skills, as the reference's does. */
type Rec = Record<string, any>;
const ca = referenceModules()["pi-coding-agent"] as Rec;
const fake = startFakeProvider();
afterAll(() => fake.stop());

test("the loader's skills are in the session's prompt (not one that disables model invocation)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "pion-sp-"));
  const cwd = mkdtempSync(join(tmpdir(), "pion-sp-cwd-"));
  const models = [{ id: "fake-model", name: "Fake", reasoning: false, input: ["text"], contextWindow: 100000, maxTokens: 1000, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } }];
  writeFileSync(join(dir, "models.json"), JSON.stringify({ providers: { fake: { baseUrl: fake.url, api: "anthropic-messages", apiKey: "k", models } } }));
  for (const [name, extra] of [["deploy-app", ""], ["manual-only", "disable-model-invocation: true\n"]]) {
    mkdirSync(join(dir, "extra", name!), { recursive: true });
    writeFileSync(join(dir, "extra", name!, "SKILL.md"), `---\nname: ${name}\ndescription: The ${name} skill\n${extra}---\nbody\n`);
  }
  const services = await ca.createAgentSessionServices({ cwd, agentDir: dir, settingsManager: ca.SettingsManager.inMemory({}), resourceLoaderOptions: { noExtensions: true, additionalSkillPaths: [join(dir, "extra")] } });
  const model = services.modelRuntime.getModel("fake", "fake-model");
  const { session } = await ca.createAgentSessionFromServices({ services, sessionManager: ca.SessionManager.inMemory(cwd), model });
  fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
  const from = fake.requests.length;
  await session.prompt("hi");
  const system = ((fake.requests[from]!.body as Rec).system as Rec[]).map((b) => b.text).join("");
  expect(system).toContain("deploy-app: The deploy-app skill");
  expect(system).toContain(join(dir, "extra", "deploy-app", "SKILL.md"));
  expect(system).not.toContain("manual-only");
  session.dispose();
});
