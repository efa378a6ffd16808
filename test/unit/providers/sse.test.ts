import { describe, expect, test } from "bun:test";
import { sseBatches, type SseEvent } from "../../../src/providers/sse.ts";

async function parse(chunks: string[]): Promise<SseEvent[]> {
  const enc = new TextEncoder();
  async function* gen() {
    for (const c of chunks) yield enc.encode(c);
  }
  const out: SseEvent[] = [];
  for await (const batch of sseBatches(gen())) out.push(...batch);
  return out;
}

describe("sseBatches", () => {
  test("events, multi-line data, comments, CRLF, an event split across chunks; an unfinished last event is dropped", async () => {
    const events = await parse([
      ": comment\n\nevent: ping\ndata: {}\n\n",
      "event: message_start\r\ndata: {\"a\":",
      "1}\r\n\r\ndata: line1\ndata: line2\n\n",
      "event: done\ndata: x",
    ]);
    expect(events).toEqual([
      { event: "ping", data: "{}" },
      { event: "message_start", data: '{"a":1}' },
      { event: null, data: "line1\nline2" },
    ]);
  });

  test("a multi-byte character split across chunks", async () => {
    const bytes = new TextEncoder().encode('data: {"t":"€"}\n\n');
    async function* gen() {
      yield bytes.subarray(0, 13);
      yield bytes.subarray(13);
    }
    const out: SseEvent[] = [];
    for await (const b of sseBatches(gen())) out.push(...b);
    expect(out).toEqual([{ event: null, data: '{"t":"€"}' }]);
  });
});
