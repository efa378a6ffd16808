import { expect, test } from "bun:test";
import { homedir } from "node:os";
import { join } from "node:path";
import { envSetting, isOffline, pionHome, sessionDirFromEnv } from "../../src/config.ts";

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
