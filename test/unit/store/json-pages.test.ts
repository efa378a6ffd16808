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

test("messages are joined as the store cut them; a row it could not cut is parsed", () => {
  const body = '{"type":"message","id":"a1","message":{"role":"user","content":"é"}}';
  const parsed: number[] = [];
  const parse = (b: string, seq: number) => {
    parsed.push(seq);
    return JSON.stringify((JSON.parse(b) as { message: unknown }).message);
  };
  const out = joinMessages([[1, bytes('{"role":"user","content":"ü"}'), null], [2, null, body]], parse);
  expect(JSON.parse(`[${text(out)}]`)).toEqual([{ role: "user", content: "ü" }, { role: "user", content: "é" }]);
  expect(parsed).toEqual([2]);
});
