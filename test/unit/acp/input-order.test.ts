import { describe, expect, test } from "bun:test";
import type * as acp from "@agentclientprotocol/sdk";
import { orderInput } from "../../../src/acp/input-order.ts";

/** An editor's side in memory: `send` feeds pion's input, `end` closes it, `written` is pion's output. */
function pipe() {
  let feed!: ReadableStreamDefaultController<acp.AnyMessage>;
  const written: acp.AnyMessage[] = [];
  const inner: acp.Stream = {
    readable: new ReadableStream<acp.AnyMessage>({ start: (c) => void (feed = c) }),
    writable: new WritableStream<acp.AnyMessage>({ write: (m) => void written.push(m) }),
  };
  const stream = orderInput(inner);
  const reader = stream.readable.getReader();
  const writer = stream.writable.getWriter();
  return {
    send: (m: acp.AnyMessage) => feed.enqueue(m),
    end: () => feed.close(),
    read: () => reader.read(),
    answer: (id: number) => writer.write({ jsonrpc: "2.0", id, result: {} }),
    ask: (id: number) => writer.write({ jsonrpc: "2.0", id, method: "session/request_permission", params: {} }),
    written,
  };
}

const request = (id: number, method: string): acp.AnyMessage => ({ jsonrpc: "2.0", id, method, params: {} });

describe("orderInput", () => {
  test("what follows initialize is handed on only once initialize was answered", async () => {
    const p = pipe();
    p.send(request(1, "initialize"));
    p.send(request(2, "session/new"));
    expect((await p.read()).value).toMatchObject({ id: 1, method: "initialize" });
    const next = p.read();
    const first = await Promise.race([next.then(() => "read"), Bun.sleep(50).then(() => "held")]);
    expect(first).toBe("held");
    await p.answer(1);
    expect((await next).value).toMatchObject({ id: 2, method: "session/new" });
  });

  test("the end of input waits for every answer; pion's requests are then answered with an error in the editor's place", async () => {
    const p = pipe();
    p.send(request(1, "session/prompt"));
    expect((await p.read()).value).toMatchObject({ id: 1 });
    await p.ask(0);
    p.end();
    // the request pion sent before the end, and one sent after it, get errors; neither reaches the editor twice
    expect((await p.read()).value).toMatchObject({ id: 0, error: { code: -32603 } });
    const late = p.read();
    await p.ask(1);
    expect((await late).value).toMatchObject({ id: 1, error: { code: -32603 } });
    expect(p.written.map((m) => ("method" in m ? m.method : "answer"))).toEqual(["session/request_permission"]);
    const end = p.read();
    await p.answer(1);
    expect((await end).done).toBe(true);
    expect(p.written.at(-1)).toEqual({ jsonrpc: "2.0", id: 1, result: {} });
  });
});
