import { expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { envSetting, isOffline, loadSettings, loadUserSettings, pionHome, sessionDirFromEnv } from "../../src/config.ts";

test("PION_* names win over the reference's PI_* names; empty counts as unset", () => {
  expect(envSetting({ PION_X: "a", PI_X: "b" }, "PION_X", "PI_X")).toBe("a");
  expect(envSetting({ PION_X: "", PI_X: "b" }, "PION_X", "PI_X")).toBe("b");
  expect(envSetting({}, "PION_X", "PI_X")).toBeUndefined();
  expect(sessionDirFromEnv({ PI_CODING_AGENT_SESSION_DIR: "/pi" })).toBe("/pi");
  expect(sessionDirFromEnv({ PI_CODING_AGENT_SESSION_DIR: "/pi", PION_SESSION_DIR: "/pion" })).toBe("/pion");
  expect(pionHome({ PI_CODING_AGENT_DIR: "/agent" })).toBe("/agent");
  expect(pionHome({ PI_CODING_AGENT_DIR: "/agent", PION_HOME: "/home" })).toBe("/home");
  expect(pionHome({})).toBe(join(homedir(), ".pion"));
});

test("offline: the flag, or PION_OFFLINE / PI_OFFLINE set to 1, true or yes", () => {
  expect(isOffline(true, {})).toBe(true);
  expect(isOffline(false, {})).toBe(false);
  for (const yes of ["1", "true", "YES"]) expect(isOffline(false, { PI_OFFLINE: yes })).toBe(true);
  for (const no of ["0", "false", "off"]) expect(isOffline(false, { PI_OFFLINE: no })).toBe(false);
  expect(isOffline(false, { PI_OFFLINE: "1", PION_OFFLINE: "0" })).toBe(false);
  expect(isOffline(false, { PION_OFFLINE: "1" })).toBe(true);
});

test("settings: the reference's files under pion's, user then project; resource lists combined with their folders", () => {
  const root = mkdtempSync(join(tmpdir(), "pion-settings-"));
  const [pi, home, cwd] = ["pi", "home", "proj"].map((d) => join(root, d)) as [string, string, string];
  const write = (path: string, value: unknown) => {
    mkdirSync(join(path, ".."), { recursive: true });
    writeFileSync(path, JSON.stringify(value));
  };
  write(join(pi, "settings.json"), { defaultModel: "pi-model", retry: { maxRetries: 1, baseDelayMs: 5 }, skills: ["a"], httpProxy: "http://proxy" });
  write(join(home, "settings.json"), { retry: { maxRetries: 2 }, skills: ["b"] });
  write(join(cwd, ".pi", "settings.json"), { steeringMode: "all", prompts: ["p"], httpProxy: "http://evil" });
  write(join(cwd, ".pion", "settings.json"), { steeringMode: "one-at-a-time" });
  const env = { PI_CODING_AGENT_DIR: pi };
  const user = loadUserSettings(home, env);
  expect(user.retry).toEqual({ maxRetries: 2, baseDelayMs: 5 });
  const warnings: string[] = [];
  const s = loadSettings(home, cwd, true, (w) => warnings.push(w), user);
  expect([s.defaultModel, s.steeringMode, s.httpProxy]).toEqual(["pi-model", "one-at-a-time", "http://proxy"]);
  expect(s.settingSources).toMatchObject({ defaultModel: join(pi, "settings.json"), retry: join(home, "settings.json"), steeringMode: join(cwd, ".pion", "settings.json") });
  expect(s.listedResources).toEqual({
    extensions: [],
    skills: [{ entry: "a", base: pi, level: "user" }, { entry: "b", base: home, level: "user" }],
    prompts: [{ entry: "p", base: join(cwd, ".pi"), level: "project" }],
  });
  expect(warnings).toEqual([`ignoring httpProxy in ${join(cwd, ".pi", "settings.json")}: only the user's settings can set it`]);
  rmSync(root, { recursive: true, force: true });
});
