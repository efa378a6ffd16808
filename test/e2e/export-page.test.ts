import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { startFakeProvider } from "../support/fake-provider.ts";
import { Pion, runPion, tempDirs, writeFakeModels, type Rec } from "../support/pion.ts";
import { describeWith } from "../support/requires.ts";

/**
 * The session page as a person uses it, in real headless Chromium driven through playwright-core:
 * a two-branch session made by pion over RPC (an edit, a write, thinking, a bash call, a hostile
 * message), exported with export_html and opened from file://. Screenshots go to
 * $PION_TEST_ARTIFACTS (or a temp folder) and their paths are printed.
 */
const CHROMIUM = process.env.PION_TEST_CHROMIUM ?? "/usr/bin/chromium";
const MISSING = existsSync(CHROMIUM) ? undefined : `${CHROMIUM} not found: install it with \`apt-get install -y chromium\``;
const ARTIFACTS = process.env.PION_TEST_ARTIFACTS ?? mkdtempSync(join(tmpdir(), "pion-page-shots-"));
const HOSTILE = `<script>document.title='PWNED'</script><img src=x onerror="document.title='PWNED'">`;

interface Made {
  page: string;
  sessionFile: string;
  entries: Rec[];
  firstUserId: string;
  secondUserId: string;
}

/**
 * A session pion makes over RPC (thinking, a write, an edit, a 60-line bash output), then a
 * second branch from before its first user message, appended to the file the way the reference
 * writes an in-place branch (a user message and a reply whose parent is the earlier entry), and the
 * file exported with `pion --export`, as a user would.
 */
async function makeSession(): Promise<Made> {
  const fake = startFakeProvider();
  const dirs = tempDirs();
  writeFakeModels(dirs.home, fake.url);
  writeFileSync(join(dirs.cwd, "notes.txt"), "line one\nline two\nline three\n");
  const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model"] });
  fake.enqueue({
    blocks: [
      { type: "thinking", thinking: "pondering the notes file", signature: "sig" },
      { type: "toolCall", name: "write", arguments: { path: "made.txt", content: "alpha\nbeta\n" } },
      { type: "toolCall", name: "edit", arguments: { path: "notes.txt", edits: [{ oldText: "line two", newText: "line 2 (edited)" }] } },
      { type: "toolCall", name: "bash", arguments: { command: "seq 1 60" } },
    ],
  });
  fake.enqueue({ blocks: [{ type: "text", text: "First branch done." }] });
  const from = p.records.length;
  await p.request({ type: "prompt", message: "first task: tidy the notes" });
  await p.waitFor("agent_settled", from);
  const sessionFile: string = (await p.request({ type: "get_state" })).data.sessionFile;
  await p.close();
  await fake.stop();

  const lines = readFileSync(sessionFile, "utf8").trim().split("\n").map((l) => JSON.parse(l) as Rec);
  const firstUser = lines.find((e) => e.type === "message" && e.message.role === "user")!;
  const at = (ms: number) => new Date(Date.now() + ms).toISOString();
  const secondUser = { type: "message", id: "b0000001", parentId: firstUser.parentId, timestamp: at(1000), message: { role: "user", content: [{ type: "text", text: `second try ${HOSTILE}` }], timestamp: Date.now() + 1000 } };
  const reply = {
    type: "message",
    id: "b0000002",
    parentId: "b0000001",
    timestamp: at(2000),
    message: { role: "assistant", content: [{ type: "text", text: "Second branch answer." }], api: "anthropic-messages", provider: "fake", model: "fake-model", usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: "stop", timestamp: Date.now() + 2000 },
  };
  writeFileSync(sessionFile, `${readFileSync(sessionFile, "utf8")}${JSON.stringify(secondUser)}\n${JSON.stringify(reply)}\n`);
  const page = join(dirs.cwd, "session.html");
  const out = await runPion(["--export", sessionFile, page], dirs);
  expect(out.code).toBe(0);
  return { page, sessionFile, entries: [...lines.slice(1), secondUser, reply], firstUserId: firstUser.id, secondUserId: secondUser.id };
}

let browser: Browser;
let made: Made;

describeWith("the session page in headless Chromium (playwright-core)", MISSING, () => {
  beforeAll(async () => {
    const { chromium } = await import("playwright-core");
    [browser, made] = await Promise.all([chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu"] }), makeSession()]);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  const open = async (hash = ""): Promise<{ page: Page; errors: string[] }> => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    page.on("console", (m) => {
      if (m.type() === "error") errors.push(m.text());
    });
    await page.goto(`file://${made.page}${hash}`);
    await page.waitForSelector("body.drawn");
    return { page, errors };
  };
  const shown = (page: Page) => page.$$eval(".ent:not([hidden])", (els) => els.map((e) => (e as unknown as { dataset: Record<string, string> }).dataset.id));
  const shot = async (page: Page, name: string) => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const path = join(ARTIFACTS, name);
    await page.screenshot({ path, fullPage: false });
    console.log(`export-page: screenshot at ${path}`);
  };

  test("the tree lists every entry of both branches; the current branch is shown", async () => {
    const { page, errors } = await open();
    await page.click('button[data-filter="all"]');
    const ids = await page.$$eval("#tree .row", (els) => els.map((e) => (e as unknown as { dataset: Record<string, string> }).dataset.id));
    expect(new Set(ids)).toEqual(new Set(made.entries.map((e) => e.id)));
    expect(await page.textContent("#tree-count")).toBe(`${made.entries.length} of ${made.entries.length} entries`);
    expect(await page.$eval("#tree .row.leaf", (e) => e.textContent)).toContain("Second branch answer.");
    const visible = await shown(page);
    expect(visible).toContain(made.secondUserId);
    expect(visible).not.toContain(made.firstUserId);
    await shot(page, "session-page.png");
    expect(errors).toEqual([]);
    await page.close();
  });

  test("search narrows the tree and marks the match; / focuses it, arrows move through the tree", async () => {
    const { page } = await open();
    const before = await page.$$eval("#tree .row", (els) => els.length);
    await page.keyboard.press("/");
    expect(await page.evaluate(() => (globalThis as unknown as { document: { activeElement?: { id: string } } }).document.activeElement?.id)).toBe("search");
    await page.keyboard.type("tidy");
    const rows = await page.$$eval("#tree .row", (els) => els.map((e) => e.textContent));
    expect(rows.length).toBeLessThan(before);
    expect(rows.some((t) => t?.includes("first task: tidy the notes"))).toBe(true);
    expect(await page.$eval("#tree .row mark", (m) => m.textContent)).toBe("tidy");
    await page.keyboard.press("Escape");
    await page.fill("#search", "");
    await page.dispatchEvent("#search", "input");
    await page.click(`#tree .row[data-id="${made.secondUserId}"]`);
    await page.keyboard.press("ArrowUp");
    expect(await page.$eval("#tree .row.selected", (e) => (e as unknown as { dataset: Record<string, string> }).dataset.id)).not.toBe(made.secondUserId);
    await page.close();
  });

  test("clicking an entry of the other branch shows that branch, with the edit and the write as diffs", async () => {
    const { page } = await open();
    await page.click(`#tree .row[data-id="${made.firstUserId}"]`);
    const visible = await shown(page);
    expect(visible).toContain(made.firstUserId);
    expect(visible).not.toContain(made.secondUserId);
    expect(page.url()).toContain(`entry=${made.firstUserId}`);
    const marks = await page.$$eval(".ent:not([hidden]) pre.diff .dl", (els) => els.map((e) => `${e.classList[1]}|${e.textContent}`));
    expect(marks).toContain("del|-2 line two");
    expect(marks).toContain("add|+2 line 2 (edited)");
    expect(marks).toContain("ctx| 1 line one");
    expect(marks).toContain("add|+1 alpha");
    // the bash output of 60 lines: 20 shown, the rest folded under their count
    expect(await page.textContent(".ent:not([hidden]) details.more > summary")).toBe("40 more lines");
    await shot(page, "session-page-first-branch.png");
    await page.close();
  });

  test("toggles hide thinking and tool output, and the URL hash keeps them for a link", async () => {
    const { page } = await open(`#entry=${made.firstUserId}`);
    expect(await page.isVisible(".ent:not([hidden]) details.thinking")).toBe(true);
    await page.uncheck("#toggle-thinking");
    await page.uncheck("#toggle-tools");
    expect(await page.isVisible(".ent:not([hidden]) details.thinking")).toBe(false);
    expect(await page.isVisible(".ent:not([hidden]) .tool-output")).toBe(false);
    const link = page.url();
    expect(link).toContain("thinking=0");
    expect(link).toContain("tools=0");
    const again = await browser.newPage();
    await again.goto(link);
    await again.waitForSelector("body.drawn");
    expect(await again.isVisible(".ent:not([hidden]) details.thinking")).toBe(false);
    expect(await again.isChecked("#toggle-tools")).toBe(false);
    expect(await shown(again)).toContain(made.firstUserId);
    await again.close();
    await page.close();
  });

  test("the JSONL download is the session file", async () => {
    const { page } = await open();
    const [download] = await Promise.all([page.waitForEvent("download"), page.click("#download-jsonl")]);
    const path = await download.path();
    expect(readFileSync(path!, "utf8")).toBe(readFileSync(made.sessionFile, "utf8"));
    expect(download.suggestedFilename()).toEndWith(".jsonl");
    await page.close();
  });

  test("a message holding <script> and an onerror image shows as text and runs nothing", async () => {
    const { page, errors } = await open();
    expect(await page.title()).not.toContain("PWNED");
    const text = await page.textContent(`#e-${made.secondUserId}`);
    expect(text).toContain(HOSTILE);
    expect(await page.$$eval("main img", (els) => els.length)).toBe(0);
    expect(errors.filter((e) => /Content Security Policy/i.test(e))).toEqual([]);
    await page.close();
  });
});
