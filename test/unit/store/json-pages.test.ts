import { expect, test } from "bun:test";
import { joinBodies, joinMessages } from "../../../src/store/json-pages.ts";

const bytes = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array) => new TextDecoder().decode(b);
/** The offset store writes record: UTF-16 units to just after the message's key. */
const offsetOf = (body: string) => body.indexOf(',"message":') + ',"message":'.length;

test("bodies are joined by commas as the bytes they are", () => {
  expect(text(joinBodies([[1, bytes('{"a":"é"}')], [2, bytes('{"b":2}')]]))).toBe('{"a":"é"},{"b":2}');
  expect(text(joinBodies([[1, bytes("{}")]]))).toBe("{}");
});

test("a message is cut from its body where the bytes before its offset are its key, parsed anywhere else", () => {
  const plain = '{"type":"message","id":"a1","parentId":null,"timestamp":"t","message":{"role":"user","content":"ünïcode €"}}';
  // A non-ASCII id: the recorded offset (UTF-16 units) is not the byte offset.
  const foreign = '{"type":"message","id":"ä€","parentId":null,"timestamp":"t","message":{"role":"user","content":"x"}}';
  const parsed: number[] = [];
  const parse = (body: string, seq: number) => {
    parsed.push(seq);
    return JSON.stringify((JSON.parse(body) as { message: unknown }).message);
  };
  const out = joinMessages(
    [
      [1, bytes(plain), offsetOf(plain)],
      [2, bytes(foreign), offsetOf(foreign)],
      [3, bytes(plain), null],
      [4, bytes(plain), offsetOf(plain) - 1], // an offset that does not follow the key
    ],
    parse,
  );
  expect(JSON.parse(`[${text(out)}]`)).toEqual([
    { role: "user", content: "ünïcode €" },
    { role: "user", content: "x" },
    { role: "user", content: "ünïcode €" },
    { role: "user", content: "ünïcode €" },
  ]);
  expect(parsed).toEqual([2, 3, 4]);
});
