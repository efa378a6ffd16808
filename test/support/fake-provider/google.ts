/**
 * Scripted replies -> Gemini `streamGenerateContent?alt=sse` frames: one `GenerateContentResponse`
 * per `data:` event, parts in `candidates[0].content.parts`, the finish reason and usage on the last.
 */
import type { Frame, StreamPlan } from "./encoders.ts";

const dataOnly = (data: unknown): Frame => `data: ${JSON.stringify(data)}\r\n\r\n`;
const deltasOf = (text: string | string[]): string[] => (typeof text === "string" ? [text] : text);

/** A base64 signature like the ones Gemini attaches (the SDK and pion check only its shape). */
export const fakeThoughtSignature = (): string => Buffer.from(crypto.getRandomValues(new Uint8Array(48))).toString("base64");

export function encodeGoogle(plan: StreamPlan): Frame[] {
  const responseId = `resp-${crypto.randomUUID().slice(0, 8)}`;
  const chunk = (parts: unknown[], extra: Record<string, unknown> = {}) =>
    dataOnly({ candidates: [{ content: { role: "model", parts }, index: 0, ...extra }], modelVersion: plan.model, responseId });
  const frames: Frame[] = [];
  for (const b of plan.blocks) {
    if (b.type === "text" || b.type === "thinking") {
      const deltas = deltasOf(b.type === "text" ? b.text : b.thinking);
      deltas.forEach((d, i) => {
        const last = i === deltas.length - 1;
        const sig = last && "signature" in b && b.signature ? { thoughtSignature: b.signature } : {};
        frames.push(chunk([{ text: d, ...(b.type === "thinking" ? { thought: true } : {}), ...sig }]));
      });
    } else if (b.type === "toolCall") {
      const args = typeof b.arguments === "string" ? (JSON.parse(b.arguments) as unknown) : b.arguments;
      frames.push(chunk([{ functionCall: { ...(b.id ? { id: b.id } : {}), name: b.name, args }, ...(b.signature ? { thoughtSignature: b.signature } : {}) }]));
    }
  }
  if (plan.error) {
    frames.push(dataOnly({ error: { code: 503, message: plan.error.message, status: plan.error.errorType ?? "UNAVAILABLE" } }));
    return frames;
  }
  const { usage } = plan;
  const finishReason = plan.finishReason ?? (plan.stopReason === "length" ? "MAX_TOKENS" : "STOP");
  frames.push(
    dataOnly({
      candidates: [{ content: { role: "model", parts: [{ text: "" }] }, finishReason, index: 0 }],
      usageMetadata: {
        promptTokenCount: usage.input + usage.cacheRead,
        candidatesTokenCount: usage.output - (usage.reasoning ?? 0),
        ...(usage.reasoning ? { thoughtsTokenCount: usage.reasoning } : {}),
        ...(usage.cacheRead ? { cachedContentTokenCount: usage.cacheRead } : {}),
        totalTokenCount: usage.input + usage.cacheRead + usage.output,
      },
      modelVersion: plan.model,
      responseId,
    }),
  );
  return frames;
}
