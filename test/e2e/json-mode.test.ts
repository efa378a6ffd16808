import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { startFakeProvider } from "../support/fake-provider.ts";
import { runPion, tempDirs, writeFakeModels, type Rec } from "../support/pion.ts";

function setup() {
  const fake = startFakeProvider();
  const dirs = tempDirs();
  writeFakeModels(dirs.home, fake.url);
  return { fake, dirs };
}
const lines = (out: string): Rec[] => out.split("\n").filter(Boolean).map((l) => JSON.parse(l));
const MODEL = ["--model", "fake/fake-model"];

describe("json mode", () => {
  test.concurrent("header line, then the events of each prompt in turn, exit 0", async () => {
    const { fake, dirs } = setup();
    fake.enqueue({ blocks: [{ type: "text", text: ["Hel", "lo"] }] }, { blocks: [{ type: "text", text: "Again" }] });
    const r = await runPion(["--mode", "json", ...MODEL, "first", "second"], dirs);
    expect(r.code).toBe(0);
    const recs = lines(r.stdout);
    expect(recs[0]).toEqual({ type: "session", version: 3, id: expect.any(String), timestamp: expect.any(String), cwd: dirs.cwd });
    expect(recs.filter((x) => x.type === "response")).toEqual([]);
    expect(recs.filter((x) => x.type === "agent_start").length).toBe(2);
    expect(recs.filter((x) => x.type === "agent_settled").length).toBe(2);
    expect(recs.at(-1)).toMatchObject({ type: "agent_settled", aborted: false });
    const texts = recs.filter((x) => x.type === "message_end" && x.message.role === "assistant").map((x) => x.message.content[0].text);
    expect(texts).toEqual(["Hello", "Again"]);
    expect(recs[1]).toEqual({ type: "agent_start" });
    await fake.stop();
  });

  test.concurrent("a failed final turn exits 1; no prompt exits 2; the prompt may come on stdin", async () => {
    const { fake, dirs } = setup();
    fake.enqueue({ kind: "http_error", status: 401, message: "bad key", errorType: "authentication_error" });
    const failed = await runPion(["--mode", "json", ...MODEL, "hi"], dirs);
    expect(failed.code).toBe(1);
    const end = lines(failed.stdout).find((x) => x.type === "message_end" && x.message.role === "assistant");
    expect(end!.message.stopReason).toBe("error");
    const none = await runPion(["--mode", "json", ...MODEL], { ...dirs, stdin: "" });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("no prompt");
    fake.enqueue({ blocks: [{ type: "text", text: "from stdin" }] });
    const piped = await runPion(["--mode", "json", ...MODEL], { ...dirs, stdin: "question on stdin\n" });
    expect(piped.code).toBe(0);
    const user = lines(piped.stdout).find((x) => x.type === "message_end" && x.message.role === "user");
    expect(user!.message.content[0].text).toBe("question on stdin");
    await fake.stop();
  });
});

describe("print mode", () => {
  test.concurrent("-p prints only the final text; errors go to stderr with exit 1", async () => {
    const { fake, dirs } = setup();
    fake.enqueue({ blocks: [{ type: "toolCall", id: "t", name: "bash", arguments: { command: "echo tool-ran" } }] });
    fake.enqueue({ blocks: [{ type: "text", text: "The answer is 42." }] });
    const ok = await runPion(["-p", ...MODEL, "question"], dirs);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toBe("The answer is 42.\n");
    expect(ok.stderr).toBe("");
    fake.enqueue({ kind: "http_error", status: 400, message: "nope", errorType: "invalid_request_error" });
    const bad = await runPion(["--mode", "print", ...MODEL, "question"], dirs);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toBe("");
    expect(bad.stderr).toContain("400");
    await fake.stop();
  });
});

describe("the outcome is the run this invocation started", () => {
  test.concurrent("a resumed session whose new run fails in the store: exit 1 with the reason, never the earlier answer", async () => {
    const { fake, dirs } = setup();
    fake.enqueue({ blocks: [{ type: "text", text: "first answer" }] });
    const first = await runPion(["-p", ...MODEL, "question"], dirs);
    expect(first).toMatchObject({ code: 0, stdout: "first answer\n" });
    // The store refuses every new message from now on (a full disk, a broken database...).
    const { Database } = await import("bun:sqlite");
    const db = new Database(join(dirs.home, "sessions", "pion.db"));
    db.run("CREATE TRIGGER refuse_messages BEFORE INSERT ON entry WHEN NEW.type = 'message' BEGIN SELECT RAISE(ABORT, 'the disk says no'); END");
    db.close();
    for (const mode of [["-p"], ["--mode", "json"]]) {
      const again = await runPion([...mode, ...MODEL, "--continue", "another question"], dirs);
      expect(again.code).toBe(1);
      expect(again.stderr).toContain("pion: the disk says no");
      if (mode[0] === "-p") expect(again.stdout).toBe("");
      else expect(again.stdout).not.toContain("first answer");
    }
    expect(fake.requests.length).toBe(1);
    await fake.stop();
  });
});
