import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { startFakeProvider } from "../support/fake-provider.ts";
import { gradientPng as png, imageSize as size } from "../support/images.ts";
import { runPion, tempDirs, writeFakeModels, writeSettings, type Rec } from "../support/pion.ts";

const RESIZE_EXTENSION = resolve(import.meta.dir, "../fixtures/extensions/resize-image.ts");

type Block = { type: string; text?: string; content?: Block[]; source?: { media_type: string; data: string } };
/** The read call's tool_result as the model received it (Anthropic Messages shape). */
function toolResult(body: unknown): Block[] {
  const messages = (body as { messages: { role: string; content: Block[] }[] }).messages;
  const result = messages.at(-1)!.content.find((b) => b.type === "tool_result");
  return result!.content!;
}

async function readThroughModel(settings: Record<string, unknown> | undefined, image: Uint8Array, model?: { inputLimits: Record<string, unknown> }) {
  await using fake = startFakeProvider();
  const dirs = tempDirs();
  writeFakeModels(dirs.home, fake.url, model ? { small: { baseUrl: fake.url, api: "anthropic-messages", apiKey: "k", models: [{ id: "eyes", input: ["text", "image"], inputLimits: model.inputLimits }] } } : {});
  if (settings) writeSettings(dirs.home, settings);
  writeFileSync(join(dirs.cwd, "shot.png"), image);
  fake.enqueue({ blocks: [{ type: "toolCall", id: "r1", name: "read", arguments: { path: "shot.png" } }] }, { blocks: [{ type: "text", text: "seen" }] });
  const r = await runPion(["--mode", "json", "--model", model ? "small/eyes" : "fake/fake-model", "look at shot.png"], dirs);
  expect(r.code).toBe(0);
  const events = r.stdout.trim().split("\n").map((line) => JSON.parse(line) as Rec);
  const end = events.find((e) => e.type === "tool_execution_end")!;
  return { sent: toolResult(fake.requests[1]!.body), end };
}

describe("read scales large images down (settings images.autoResize)", () => {
  const big = png(2600, 1200);

  test.concurrent("a PNG over 2000 pixels wide reaches the model at 2000 wide, with a note of the original size", async () => {
    const { sent, end } = await readThroughModel(undefined, big);
    const [text, image] = sent;
    expect(text!.text).toContain("Read image shot.png (image/png");
    expect(text!.text).toContain("[Image: original 2600x1200, displayed at 2000x923. Multiply coordinates by 1.30 to map to original image.]");
    expect(image!.type).toBe("image");
    expect(image!.source!.media_type).toBe("image/png");
    expect(size(image!.source!.data)).toEqual([2000, 923]);
    expect(image!.source!.data.length).toBeLessThan(4.5 * 1024 * 1024);
    // the event the host sees carries the same result
    expect(JSON.stringify(end.result)).toContain("displayed at 2000x923");
  });

  test.concurrent("images.autoResize: false sends the file as it is", async () => {
    const { sent } = await readThroughModel({ images: { autoResize: false } }, big);
    expect(sent[0]!.text).not.toContain("[Image: original");
    expect(sent[1]!.source!.data).toBe(Buffer.from(big).toString("base64"));
  });

  test.concurrent("the model's inputLimits.images.resize (models.json) are the limits, as the reference's read takes them", async () => {
    const { sent } = await readThroughModel(undefined, big, { inputLimits: { images: { resize: { maxWidth: 500, maxHeight: 2000 } } } });
    expect(sent[0]!.text).toContain("[Image: original 2600x1200, displayed at 500x231.");
    expect(size(sent[1]!.source!.data)).toEqual([500, 231]);
  });

  test.concurrent("an extension's resizeImage and convertToPng from @earendil-works/pi-coding-agent", async () => {
    await using fake = startFakeProvider();
    const dirs = tempDirs();
    writeFakeModels(dirs.home, fake.url);
    writeFileSync(join(dirs.cwd, "pic.png"), png(400, 200));
    fake.enqueue({ blocks: [{ type: "toolCall", id: "s1", name: "shrink", arguments: { path: "pic.png" } }] }, { blocks: [{ type: "text", text: "ok" }] });
    const r = await runPion(["--mode", "json", "--model", "fake/fake-model", "-e", RESIZE_EXTENSION, "shrink pic.png"], dirs);
    expect(r.code).toBe(0);
    const text = toolResult(fake.requests[1]!.body)[0]!.text!;
    expect(JSON.parse(text)).toEqual({ mimeType: "image/png", width: 100, height: 50, originalWidth: 400, wasResized: true, png: "image/png" });
  });
});
