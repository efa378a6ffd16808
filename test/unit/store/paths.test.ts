import { expect, test } from "bun:test";
import { databasePath, sessionDirFor, sessionFileName, sessionFilePath } from "../../../src/store/paths.ts";

test("session paths follow the reference's naming", () => {
  expect(sessionDirFor("/h/.pion/sessions", "/home/user/project")).toBe("/h/.pion/sessions/--home-user-project--");
  expect(sessionDirFor("/s", "/a/b:c/d")).toBe("/s/--a-b-c-d--");
  expect(sessionFileName("2026-11-29T13:58:47.245Z", "01a22799-e6cd")).toBe("2026-11-29T13-58-47-245Z_01a22799-e6cd.jsonl");
  expect(sessionFilePath("/s", "/p", "2026-11-29T13:58:47.245Z", "id")).toBe("/s/--p--/2026-11-29T13-58-47-245Z_id.jsonl");
  expect(databasePath("/s")).toBe("/s/pion.db");
});
