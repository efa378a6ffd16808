/** One server-sent event: its `event:` name (null when absent) and its `data:` lines joined by LF. */
export interface SseEvent {
  event: string | null;
  data: string;
}

/**
 * A text/event-stream body as batches of events, one batch per network chunk (one await
 * per chunk, not per event). Events end at a blank line; CRLF is accepted; comments and
 * unknown fields are skipped; an unfinished event at the end is dropped. One promise per
 * chunk instead of one per event keeps a 100k-delta reply cheap.
 */
export async function* sseBatches(body: AsyncIterable<Uint8Array>, onChunk?: () => void): AsyncGenerator<SseEvent[]> {
  const decoder = new TextDecoder();
  let buf = "";
  for await (const chunk of body) {
    onChunk?.();
    buf += decoder.decode(chunk, { stream: true });
    if (buf.includes("\r")) buf = buf.replace(/\r\n?/g, "\n");
    const batch: SseEvent[] = [];
    let start = 0;
    for (let end = buf.indexOf("\n\n", start); end !== -1; end = buf.indexOf("\n\n", start)) {
      const ev = parseBlock(buf, start, end);
      if (ev) batch.push(ev);
      start = end + 2;
    }
    buf = start > 0 ? buf.slice(start) : buf;
    if (batch.length > 0) yield batch;
  }
  // An event not ended by a blank line when the stream closes is discarded (as the SSE spec says):
  // a cut stream then reads as one that ended early.
}

function parseBlock(text: string, start: number, end: number): SseEvent | undefined {
  let event: string | null = null;
  let data: string | undefined;
  for (let i = start; i < end; ) {
    let nl = text.indexOf("\n", i);
    if (nl === -1 || nl > end) nl = end;
    const colon = text.indexOf(":", i);
    if (colon !== i && colon !== -1 && colon < nl) {
      const field = text.slice(i, colon);
      let v = colon + 1;
      if (text.charCodeAt(v) === 32) v++;
      const value = text.slice(v, nl);
      if (field === "event") event = value;
      else if (field === "data") data = data === undefined ? value : `${data}\n${value}`;
    }
    i = nl + 1;
  }
  return data === undefined && event === null ? undefined : { event, data: data ?? "" };
}
