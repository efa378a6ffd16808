import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { startFakeProvider, type FakeProvider } from "../support/fake-provider.ts";
import { base64, bmp, gradientPng, imageSize } from "../support/images.ts";
import { GATED_COMMAND, Pion, releaseGate, tempDirs, writeFakeModels, writeSettings, type Rec } from "../support/pion.ts";
import { NO_REFERENCE, referenceRpc, type RpcAgent } from "../support/reference-rpc.ts";
import { describeWith } from "../support/requires.ts";

/**
 * Images a host sends with prompt, steer, follow_up and abort_and_prompt reach the model and the
 * session as the reference normalizes them: an inline type (others converted to PNG, or left out),
 * scaled to the model's limits unless `images.autoResize` is false, with notes after the text.
 */

const SMALL = base64(gradientPng(20, 10));
const LARGE = base64(gradientPng(3000, 2000));
const TALL = base64(gradientPng(600, 2400));
const BITMAP = base64(bmp(30, 20));
const JUNK = Buffer.from("not an image").toString("base64");
const img = (data: string, mimeType = "image/png") => ({ type: "image", data, mimeType });
const DIMENSIONS_3000 = "[Image: original 3000x2000, displayed at 2000x1333. Multiply coordinates by 1.50 to map to original image.]";
const DIMENSIONS_TALL = "[Image: original 600x2400, displayed at 500x2000. Multiply coordinates by 1.20 to map to original image.]";
const CONVERTED = "[Converted from image/bmp to image/png to be sent.]";
const LEFT_OUT = "[An image is not sent: it could not be decoded to be sent as PNG.]";

type Block = { type: string; text?: string; source?: { media_type: string; data: string }; content?: unknown };
type Body = { messages: { role: string; content: string | Block[] }[] };
/** The user-side text and image blocks of a request (Anthropic Messages), tool results left out, in order. */
function userBlocks(body: unknown): Rec[] {
  return (body as Body).messages
    .filter((m) => m.role === "user" && typeof m.content !== "string")
    .flatMap((m) => (m.content as Block[]).filter((b) => b.type === "text" || b.type === "image"))
    .map((b) => (b.type === "text" ? { type: "text", text: b.text } : { type: "image", mimeType: b.source!.media_type, data: b.source!.data }));
}
/** The user messages' content as get_messages answers it. */
async function storedUserContent(agent: RpcAgent): Promise<Rec[][]> {
  const r = await agent.request({ type: "get_messages" });
  return (r.data.messages as Rec[]).filter((m) => m.role === "user").map((m) => m.content as Rec[]);
}

function setup(settings?: Record<string, unknown>, extraProviders: (url: string) => Record<string, unknown> = () => ({})) {
  const fake = startFakeProvider();
  const dirs = tempDirs();
  writeFakeModels(dirs.home, fake.url, extraProviders(fake.url));
  if (settings) writeSettings(dirs.home, settings);
  return { fake, dirs };
}

describe("prompt images are normalized before they are recorded and sent", () => {
  test.concurrent("pi.sendUserMessage with an image part: the image reaches the model, fitted as a prompt's", async () => {
    const { fake, dirs } = setup();
    await using _fake = fake;
    fake.enqueue({ blocks: [{ type: "text", text: "seen" }] });
    const png = join(dirs.cwd, "large.png");
    writeFileSync(png, gradientPng(3000, 2000));
    const ext = join(import.meta.dir, "../fixtures/extensions/send-image.ts");
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model", "-e", ext] });
    await p.request({ type: "prompt", message: `/sendimg ${png}` });
    await p.waitFor("agent_settled");
    const sent = userBlocks(fake.requests[0]!.body);
    expect(sent[0]).toEqual({ type: "text", text: ["what is in it?", "", DIMENSIONS_3000].join("\n") });
    expect(sent.slice(1).map((b) => [b.mimeType, imageSize(b.data)])).toEqual([["image/png", [2000, 1333]]]);
    await p.close();
  });

  test.concurrent("prompt: a small PNG as it was, a large one scaled with the note, a BMP converted, junk left out; stored and announced as sent", async () => {
    const { fake, dirs } = setup();
    await using _fake = fake;
    fake.enqueue({ blocks: [{ type: "text", text: "seen" }] });
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model"] });
    const r = await p.request({ type: "prompt", message: "look", images: [img(SMALL), img(LARGE), img(BITMAP, "image/bmp"), img(JUNK, "image/tiff")] });
    expect(r.data).toEqual({ disposition: "started" });
    await p.waitFor("agent_settled");
    const sent = userBlocks(fake.requests[0]!.body);
    expect(sent[0]).toEqual({ type: "text", text: ["look", "", DIMENSIONS_3000, CONVERTED, LEFT_OUT].join("\n") });
    expect(sent.slice(1).map((b) => [b.mimeType, imageSize(b.data)])).toEqual([
      ["image/png", [20, 10]],
      ["image/png", [2000, 1333]],
      ["image/png", [30, 20]],
    ]);
    expect(sent[1]!.data).toBe(SMALL);
    // What the model got is what the session holds and what message_start / message_end said.
    const asSent = sent.map((b) => (b.type === "text" ? b : { type: "image", data: b.data, mimeType: b.mimeType }));
    expect(await storedUserContent(p)).toEqual([asSent]);
    const start = p.records.find((x) => x.type === "message_start" && x.message.role === "user")!;
    const end = p.records.find((x) => x.type === "message_end" && x.message.role === "user")!;
    expect(start.message.content).toEqual(asSent);
    expect(end.message.content).toEqual(asSent);
    expect(typeof end.entryId).toBe("string");
    const file = (await p.request({ type: "get_state" })).data.sessionFile as string;
    const entries = readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l) as Rec);
    expect(entries.find((e) => e.type === "message" && e.message.role === "user")!.message.content).toEqual(asSent);
    expect(p.stderr).toBe("");
    await p.close();
  });

  test.concurrent("images.autoResize false: a large image is sent unscaled and without the dimension note; conversion still applies", async () => {
    const { fake, dirs } = setup({ images: { autoResize: false } });
    await using _fake = fake;
    fake.enqueue({ blocks: [{ type: "text", text: "seen" }] });
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model"] });
    await p.request({ type: "prompt", message: "look", images: [img(LARGE), img(BITMAP, "image/bmp")] });
    await p.waitFor("agent_settled");
    const sent = userBlocks(fake.requests[0]!.body);
    expect(sent[0]).toEqual({ type: "text", text: `look\n\n${CONVERTED}` });
    expect(sent[1]).toEqual({ type: "image", mimeType: "image/png", data: LARGE });
    expect(sent[2]!.mimeType).toBe("image/png");
    await p.close();
  });

  test.concurrent("images.autoResize is read again by ctx.reload(): the next prompt's image follows the new value", async () => {
    const { fake, dirs } = setup();
    await using _fake = fake;
    const ext = join(dirname(dirs.home), "reload.ts");
    writeFileSync(ext, 'export default (pi: any) => pi.registerCommand("reload-me", { handler: async (_a: string, ctx: any) => { const ui = ctx.ui; await ctx.reload(); ui.notify("reloaded", "info"); } });\n');
    fake.enqueue({ blocks: [{ type: "text", text: "seen" }] });
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model", "-e", ext] });
    await p.request({ type: "get_state" }); // started on the settings before
    writeSettings(dirs.home, { images: { autoResize: false } });
    const from = p.records.length;
    await p.request({ type: "prompt", message: "/reload-me" });
    await p.waitFor((r) => r.type === "extension_ui_request" && r.method === "notify", from);
    await p.request({ type: "prompt", message: "look", images: [img(LARGE)] });
    await p.waitFor("agent_settled");
    expect(userBlocks(fake.requests[0]!.body)).toEqual([{ type: "text", text: "look" }, { type: "image", mimeType: "image/png", data: LARGE }]);
    await p.close();
  });

  test.concurrent("a model's inputLimits.images.resize (models.json) are the limits", async () => {
    const limits = { images: { resize: { maxWidth: 300, maxHeight: 2000 } } };
    const { fake, dirs } = setup(undefined, (url) => ({ small: { baseUrl: url, api: "anthropic-messages", apiKey: "k", models: [{ id: "eyes", input: ["text", "image"], inputLimits: limits }] } }));
    await using _fake = fake;
    fake.enqueue({ blocks: [{ type: "text", text: "seen" }] });
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "small/eyes"] });
    await p.request({ type: "prompt", message: "look", images: [img(TALL)] });
    await p.waitFor("agent_settled");
    const sent = userBlocks(fake.requests[0]!.body);
    expect(sent[0]!.text).toBe("look\n\n[Image: original 600x2400, displayed at 300x1200. Multiply coordinates by 2.00 to map to original image.]");
    expect(imageSize(sent[1]!.data)).toEqual([300, 1200]);
    await p.close();
  });

  test.concurrent("steer and follow_up: their images are normalized when delivered; the queue shows the text as sent", async () => {
    const { fake, dirs } = setup();
    await using _fake = fake;
    fake.enqueue(
      { blocks: [{ type: "toolCall", id: "t1", name: "bash", arguments: { command: GATED_COMMAND } }] },
      { blocks: [{ type: "text", text: "steered" }] },
      { blocks: [{ type: "text", text: "followed" }] },
    );
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model"] });
    await p.request({ type: "prompt", message: "go" });
    await p.waitFor("tool_execution_start");
    expect((await p.request({ type: "steer", message: "and this", images: [img(LARGE)] })).data).toEqual({ disposition: "queued" });
    expect((await p.request({ type: "follow_up", message: "then this", images: [img(BITMAP, "image/bmp")] })).data).toEqual({ disposition: "queued" });
    const queued = p.records.filter((r) => r.type === "queue_update").at(-1)!;
    expect([queued.steering, queued.followUp]).toEqual([["and this"], ["then this"]]);
    releaseGate(dirs.cwd);
    await p.waitFor("agent_settled");
    expect(fake.requests).toHaveLength(3);
    const steered = userBlocks(fake.requests[1]!.body).slice(1);
    expect(steered[0]).toEqual({ type: "text", text: `and this\n\n${DIMENSIONS_3000}` });
    expect(imageSize(steered[1]!.data)).toEqual([2000, 1333]);
    const followed = userBlocks(fake.requests[2]!.body).slice(3);
    expect(followed[0]).toEqual({ type: "text", text: `then this\n\n${CONVERTED}` });
    expect([followed[1]!.mimeType, imageSize(followed[1]!.data)]).toEqual(["image/png", [30, 20]]);
    const stored = await storedUserContent(p);
    expect(stored.map((c) => c[0]!.text)).toEqual(["go", `and this\n\n${DIMENSIONS_3000}`, `then this\n\n${CONVERTED}`]);
    expect(stored[1]![1]!.data).toBe(steered[1]!.data);
    await p.close();
  });

  test.concurrent("abort_and_prompt: the new prompt's images are normalized too", async () => {
    const { fake, dirs } = setup();
    await using _fake = fake;
    fake.enqueue({ blocks: [{ type: "text", text: ["a", "b", "c"] }], stallAfterChunks: 2 }, { blocks: [{ type: "text", text: "ok" }] });
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model"] });
    await p.request({ type: "prompt", message: "first" });
    await p.waitFor((r) => r.type === "message_update");
    const r = await p.request({ type: "abort_and_prompt", message: "instead", images: [img(LARGE)] });
    expect(r.success).toBe(true);
    await fake.waitForRequests(2, 30_000);
    await p.waitFor((x) => x.type === "agent_settled" && !x.aborted);
    const sent = userBlocks(fake.requests[1]!.body).at(-2)!;
    expect(sent).toEqual({ type: "text", text: `instead\n\n${DIMENSIONS_3000}` });
    await p.close();
  });
});

/** Prompt (four images), then a steer and a follow-up with one each, delivered during the run. */
async function scenario(agent: RpcAgent, fake: FakeProvider, cwd: string) {
  fake.enqueue(
    { blocks: [{ type: "toolCall", id: "t1", name: "bash", arguments: { command: GATED_COMMAND } }] },
    { blocks: [{ type: "text", text: "steered" }] },
    { blocks: [{ type: "text", text: "followed" }] },
  );
  await agent.request({ type: "prompt", message: "look", images: [img(SMALL), img(LARGE), img(BITMAP, "image/bmp"), img(JUNK, "image/tiff")] });
  await agent.waitFor("tool_execution_start");
  await agent.request({ type: "steer", message: "and this", images: [img(TALL)] });
  await agent.request({ type: "follow_up", message: "then this", images: [img(BITMAP, "image/bmp")] });
  releaseGate(cwd);
  await fake.waitForRequests(3, 30_000);
  await agent.waitFor("agent_end");
  const stored = await storedUserContent(agent);
  const sent = userBlocks(fake.requests[2]!.body);
  await agent.close();
  return { stored: stored.flat().map(comparable), sent: sent.map(comparable) };
}

/** A block with the notes' wording (pion's own) reduced to what they say; the dimension note is worded alike. */
function comparable(b: Rec): Rec {
  if (b.type === "image") return { mimeType: b.mimeType, data: Bun.hash(b.data as string).toString(16) };
  const [text, notes = ""] = (b.text as string).split("\n\n");
  const kinds = notes
    .split("\n")
    .filter(Boolean)
    .map((n) => (n.startsWith("[Image: original") ? n : /omitted|not sent/.test(n) ? "left out" : /onverted/.test(n) ? "converted" : n));
  return { text, notes: kinds };
}

describeWith("prompt images as the reference normalizes them", NO_REFERENCE, () => {
  test("the same images, text and notes stored and sent, for prompt, steer and follow_up", async () => {
    const run = async (which: "pion" | "reference") => {
      const fake = startFakeProvider();
      const dirs = tempDirs();
      writeFakeModels(dirs.home, fake.url);
      const agent =
        which === "pion"
          ? new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model"] })
          : referenceRpc(["--mode", "rpc", "--provider", "fake", "--model", "fake-model"], dirs, {});
      try {
        return await scenario(agent, fake, dirs.cwd);
      } finally {
        await fake.stop();
      }
    };
    const [mine, theirs] = await Promise.all([run("pion"), run("reference")]);
    expect(mine).toEqual(theirs);
    expect(mine.stored.filter((b) => b.text !== undefined)).toEqual([
      { text: "look", notes: [DIMENSIONS_3000, "converted", "left out"] },
      { text: "and this", notes: [DIMENSIONS_TALL] },
      { text: "then this", notes: ["converted"] },
    ]);
  }, 90_000);
});
