import { describe, expect, test } from "bun:test";
import type { ImageContent, Model, UserMessage } from "../../../src/providers/types.ts";
import { fitPromptImages } from "../../../src/session/prompt-images.ts";
import type { AgentMessage } from "../../../src/store/entries.ts";
import { base64, bmp, gradientPng, imageSize } from "../../support/images.ts";

const small = base64(gradientPng(20, 10));
const large = base64(gradientPng(3000, 2000));
const bitmap = base64(bmp(30, 20));
const junk = Buffer.from("not an image").toString("base64");
const image = (data: string, mimeType = "image/png"): ImageContent => ({ type: "image", data, mimeType });
const user = (text: string, ...images: ImageContent[]): UserMessage => ({ role: "user", content: [{ type: "text", text }, ...images], timestamp: 1 });
const fit = (messages: AgentMessage[], o: { model?: Model; autoResize?: boolean } = {}) => fitPromptImages(messages, { model: o.model, autoResize: o.autoResize ?? true });
const blocks = (m: AgentMessage | undefined) => (m as UserMessage).content as (ImageContent | { type: "text"; text: string })[];
const DIMENSIONS_3000 = "[Image: original 3000x2000, displayed at 2000x1333. Multiply coordinates by 1.50 to map to original image.]";

describe("fitPromptImages", () => {
  test("an image within the limits keeps its bytes, and the text gets no note", async () => {
    const m = user("look", image(small));
    const [out] = await fit([m]);
    expect(out).toEqual(m);
  });

  test("a large PNG is scaled to 2000 pixels, and the note of its original size follows the text after a blank line", async () => {
    const [out] = await fit([user("look", image(large))]);
    const [text, img] = blocks(out);
    expect(text).toEqual({ type: "text", text: `look\n\n${DIMENSIONS_3000}` });
    expect(img).toMatchObject({ type: "image", mimeType: "image/png" });
    expect(imageSize((img as ImageContent).data)).toEqual([2000, 1333]);
  });

  test("an unsupported type becomes PNG; one that cannot be decoded is left out; one note a line, in image order", async () => {
    const [out] = await fit([user("look", image(small), image(large), image(bitmap, "image/bmp"), image(junk, "image/tiff"))]);
    const [text, ...images] = blocks(out);
    expect((text as { text: string }).text).toBe(
      ["look", "", DIMENSIONS_3000, "[Converted from image/bmp to image/png to be sent.]", "[An image is not sent: it could not be decoded to be sent as PNG.]"].join("\n"),
    );
    expect(images.map((i) => [(i as ImageContent).mimeType, imageSize((i as ImageContent).data)])).toEqual([
      ["image/png", [20, 10]],
      ["image/png", [2000, 1333]],
      ["image/png", [30, 20]],
    ]);
    expect((images[0] as ImageContent).data).toBe(small);
  });

  test("image/jpg is named image/jpeg; types are matched without their parameters", async () => {
    const jpeg = (await fit([user("a", image(small, "image/jpg"))]))[0];
    expect((blocks(jpeg)[1] as ImageContent).mimeType).toBe("image/jpeg");
    const withParams = (await fit([user("a", image(small, "IMAGE/PNG; charset=binary"))]))[0];
    expect(blocks(withParams)[1]).toEqual(image(small));
  });

  test("autoResize false: a large image is sent as it is; conversion still happens", async () => {
    const [out] = await fit([user("look", image(large), image(bitmap, "image/bmp"))], { autoResize: false });
    const [text, big, converted] = blocks(out);
    expect(text).toEqual({ type: "text", text: "look\n\n[Converted from image/bmp to image/png to be sent.]" });
    expect(big).toEqual(image(large));
    expect((converted as ImageContent).mimeType).toBe("image/png");
  });

  test("the model's inputLimits.images.resize are the limits", async () => {
    const model = { inputLimits: { images: { resize: { maxWidth: 300, maxHeight: 300, maxBytes: "many" } } } } as unknown as Model;
    const [out] = await fit([user("look", image(large))], { model });
    const [text, img] = blocks(out);
    expect((text as { text: string }).text).toBe("look\n\n[Image: original 3000x2000, displayed at 300x200. Multiply coordinates by 10.00 to map to original image.]");
    expect(imageSize((img as ImageContent).data)).toEqual([300, 200]);
  });

  test("an image that cannot be brought under the limits is left out with a note", async () => {
    const model = { inputLimits: { images: { resize: { maxBytes: 10 } } } } as unknown as Model;
    const [out] = await fit([user("look", image(small))], { model });
    expect(blocks(out)).toEqual([{ type: "text", text: "look\n\n[An image is not sent: it could not be decoded, or not made small enough to send.]" }]);
  });

  test("other messages, and user messages without images, come back as they were", async () => {
    const plain = user("hi");
    const custom: AgentMessage = { role: "custom", customType: "x", content: "c", display: true, timestamp: 1 } as AgentMessage;
    const text: AgentMessage = { role: "user", content: "just text", timestamp: 1 };
    const out = await fit([custom, plain, text, user("look", image(large))]);
    expect(out.slice(0, 3)).toEqual([custom, plain, text]);
    expect(out[0]).toBe(custom);
    expect(out[1]).toBe(plain);
    expect(blocks(out[3])).toHaveLength(2);
  });

  test("a message whose images come first still gets its notes in a text block first", async () => {
    const m: UserMessage = { role: "user", content: [image(bitmap, "image/bmp")], timestamp: 1 };
    const [out] = await fit([m]);
    expect(blocks(out)[0]).toEqual({ type: "text", text: "[Converted from image/bmp to image/png to be sent.]" });
    expect((blocks(out)[1] as ImageContent).mimeType).toBe("image/png");
  });
});
