import { createWriter } from "../rpc/writer.ts";
import type { TextContent } from "../providers/types.ts";
import { errorMessage } from "../util/errors.ts";
import type { Composed } from "./compose.ts";

/**
 * One-shot modes. json: the session header line, then every event of each prompt in
 * turn. print: only the final assistant text. Exit 1 when the last turn failed or was aborted.
 */
export async function runJsonMode({ session }: Composed, prompts: string[], mode: "json" | "print"): Promise<number> {
  if (prompts.length === 0 && !process.stdin.isTTY) {
    const text = (await Bun.stdin.text()).trim();
    if (text) prompts = [text];
  }
  if (prompts.length === 0) {
    process.stderr.write(`pion: no prompt given (pass it as an argument or on stdin)\n`);
    return 2;
  }
  const writer = createWriter(Bun.stdout.writer());
  if (mode === "json") {
    writer.write(session.header);
    session.subscribe((e) => writer.write(e));
  }
  for (const p of prompts) {
    try {
      session.prompt(p, undefined);
    } catch (err) {
      await writer.drain();
      process.stderr.write(`pion: ${errorMessage(err)}\n`);
      return 1;
    }
    await session.idle();
  }
  const last = session.lastAssistant();
  if (mode === "print" && last) {
    const text = last.content.filter((c): c is TextContent => c.type === "text").map((c) => c.text).join("");
    if (text) writer.write === undefined || process.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
  }
  await writer.drain();
  if (!last || last.stopReason === "error" || last.stopReason === "aborted") {
    if (last?.errorMessage) process.stderr.write(`pion: ${last.errorMessage}\n`);
    return 1;
  }
  return 0;
}
