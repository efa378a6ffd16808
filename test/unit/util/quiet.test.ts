import { expect, test } from "bun:test";
import { busy, whenQuiet } from "../../../src/util/quiet.ts";

const until = async (ok: () => boolean, ms = 5_000) => {
  for (const end = Date.now() + ms; !ok() && Date.now() < end; ) await Bun.sleep(10);
};

test("work waits while a command is in hand, and runs once none has been for a while", async () => {
  const answered = busy();
  let ran = 0;
  whenQuiet(() => ran++);
  await Bun.sleep(400); // several times the quiet period: still in hand
  expect(ran).toBe(0);
  const again = busy(); // a second command, answered first
  again();
  again(); // answering twice counts once
  await Bun.sleep(300);
  expect(ran).toBe(0);
  answered();
  await until(() => ran > 0);
  expect(ran).toBe(1);
});

test("work waits two seconds at most: a host that never pauses still gets it done", async () => {
  const answered = busy();
  let ran = 0;
  whenQuiet(() => ran++);
  await Bun.sleep(1_500);
  expect(ran).toBe(0); // in hand all along
  await until(() => ran > 0);
  expect(ran).toBe(1);
  answered();
});

test("with nothing in hand, work runs after the quiet period", async () => {
  let ran = false;
  whenQuiet(() => (ran = true));
  expect(ran).toBe(false); // never at once
  await until(() => ran);
  expect(ran).toBe(true);
});
