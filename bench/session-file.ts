import { writeFileSync } from "node:fs";

const idOf = (i: number) => (0x10000000 + i * 7919).toString(16).slice(-8);
const filler = (i: number, bytes: number) => {
  const words = `line ${i} of the module reads the configuration, checks each value and hands it to the next step; `;
  return words.repeat(Math.ceil(bytes / words.length)).slice(0, bytes);
};

/**
 * A v3 session file with `n` entries, the reference's shapes: a model and thinking-level change,
 * then turns of user → assistant (text + tool call) → tool result → assistant (text). Returns
 * the id of the entry 10 before the end and the number of context messages.
 */
export function writeSession(path: string, n: number, cwd: string): { sinceId: string; messages: number } {
  const t = Date.parse("2026-01-01T00:00:00Z");
  const usage = {
    input: 1200,
    output: 180,
    cacheRead: 800,
    cacheWrite: 0,
    totalTokens: 2180,
    cost: { input: 0.0036, output: 0.0027, cacheRead: 0.00024, cacheWrite: 0, total: 0.00654, totalFromProvider: false },
    cacheWrite1h: 0,
  };
  const assistant = (i: number, ts: number, content: unknown[], stopReason: string) => ({
    role: "assistant",
    content,
    api: "anthropic-messages",
    provider: "fake",
    model: "fake-model",
    usage,
    stopReason,
    timestamp: ts,
    responseId: `msg_${idOf(i)}`,
    rawStopReason: stopReason === "toolUse" ? "tool_use" : "end_turn",
    durationMs: 1800,
    thinkingLevel: "medium",
  });
  const out: string[] = [JSON.stringify({ type: "session", version: 3, id: crypto.randomUUID(), timestamp: new Date(t).toISOString(), cwd })];
  let messages = 0;
  for (let i = 0; i < n; i++) {
    const ts = t + i * 1000;
    const base = { id: idOf(i), parentId: i === 0 ? null : idOf(i - 1), timestamp: new Date(ts).toISOString() };
    let line: object;
    if (i === 0) line = { type: "model_change", ...base, provider: "fake", modelId: "fake-model" };
    else if (i === 1) line = { type: "thinking_level_change", ...base, thinkingLevel: "medium" };
    else {
      messages++;
      const call = `toolu_${idOf(i - 1)}`;
      let message: object;
      switch ((i - 2) % 4) {
        case 0:
          message = { role: "user", content: [{ type: "text", text: `Question ${i}: ${filler(i, 500)}` }], timestamp: ts };
          break;
        case 1:
          message = assistant(i, ts, [
            { type: "text", text: `I will read the file first. ${filler(i, 300)}` },
            { type: "toolCall", id: `toolu_${idOf(i)}`, name: "read", arguments: { path: `src/module-${i}.ts` } },
          ], "toolUse");
          break;
        case 2:
          message = {
            role: "toolResult",
            toolCallId: call,
            toolName: "read",
            content: [{ type: "text", text: filler(i, i % 2000 === 4 ? 20_000 : 700) }],
            isError: false,
            timestamp: ts,
          };
          break;
        default:
          message = assistant(i, ts, [{ type: "text", text: `Answer ${i}: ${filler(i, 650)}` }], "stop");
      }
      line = { type: "message", ...base, message };
    }
    out.push(JSON.stringify(line));
  }
  writeFileSync(path, `${out.join("\n")}\n`);
  return { sinceId: idOf(n - 10), messages };
}
