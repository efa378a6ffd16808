/**
 * A minimal Anthropic Messages SSE server for the streaming bench: the whole reply (message_start,
 * N text deltas, message_stop) is encoded once and every POST .../messages gets the same bytes,
 * sent as one body so the server is never the bottleneck. (The test fake provider enqueues one
 * ReadableStream chunk per frame, which is fine for tests but costs time at 100,000 frames.)
 */
export interface SseServer {
  url: string;
  /** Bytes of one reply. */
  size: number;
  requests: number;
  stop(): Promise<void>;
}

export function anthropicReply(deltas: number, text = (i: number) => `t${i % 10} `): Uint8Array {
  const ev = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
  const parts: string[] = [
    ev("message_start", {
      type: "message_start",
      message: {
        id: "msg_bench",
        type: "message",
        role: "assistant",
        model: "fake-model",
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 },
      },
    }),
    ev("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
  ];
  for (let i = 0; i < deltas; i++) {
    parts.push(ev("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: text(i) } }));
  }
  parts.push(
    ev("content_block_stop", { type: "content_block_stop", index: 0 }),
    ev("message_delta", {
      type: "message_delta",
      delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: { output_tokens: deltas },
    }),
    ev("message_stop", { type: "message_stop" }),
  );
  return new TextEncoder().encode(parts.join(""));
}

export function startSseServer(deltas: number): SseServer {
  const body = anthropicReply(deltas);
  let requests = 0;
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      await req.arrayBuffer();
      if (req.method !== "POST" || !new URL(req.url).pathname.endsWith("/messages")) return new Response("not found", { status: 404 });
      requests++;
      return new Response(body, { headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" } });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    size: body.length,
    get requests() {
      return requests;
    },
    stop: () => server.stop(true),
  };
}

if (import.meta.main) {
  const s = startSseServer(Number(process.argv[2] ?? 100000));
  console.log(`${s.url} (${s.size} bytes per reply)`);
}
