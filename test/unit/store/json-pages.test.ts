import { expect, test } from "bun:test";
import { joinBodies, joinMessages } from "../../../src/store/json-pages.ts";

const bytes = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array) => new TextDecoder().decode(b);

test("bodies are joined by commas as the bytes they are", () => {
  expect(text(joinBodies([[1, bytes('{"a":"é"}')], [2, bytes('{"b":2}')]]))).toBe('{"a":"é"},{"b":2}');
  expect(text(joinBodies([[1, bytes("{}")]]))).toBe("{}");
});

test("messages cut by SQLite are taken as they are; the other rows are parsed", () => {
  const parsed: number[] = [];
  const out = joinMessages(
    [
      [1, bytes('{"role":"user","content":"ü"}'), null],
      [2, null, '{"type":"message","id":"ä","message":{"role":"user","content":"x"}}'],
    ],
    (body, seq) => {
      parsed.push(seq);
      return JSON.stringify((JSON.parse(body) as { message: unknown }).message);
    },
  );
  expect(JSON.parse(`[${text(out)}]`)).toEqual([
    { role: "user", content: "ü" },
    { role: "user", content: "x" },
  ]);
  expect(parsed).toEqual([2]);
});
