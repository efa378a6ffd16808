import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CONTENT_SECURITY_POLICY, renderSessionHtml, writeHtmlExport } from "../../src/export/html.ts";
import { describeWith } from "../support/requires.ts";
import PAGE_SCRIPT from "../../src/export/page-script.js" with { type: "text" };
import { HOSTILE, hostileSession, PAYLOADS, SAFE_LINK, sampleSession, tagsOf, unexpectedMarkup, withoutOwnScripts } from "../unit/export/sessions.ts";

/**
 * Opens an exported hostile session in real headless Chromium (no npm dependency: the
 * Debian `chromium` package) and checks the DOM after every script that could run has run.
 * Skipped when /usr/bin/chromium (or $PION_TEST_CHROMIUM) is missing, except under CI, where that is a failure.
 */
const CHROMIUM = process.env.PION_TEST_CHROMIUM ?? "/usr/bin/chromium";
const haveChromium = existsSync(CHROMIUM);
const MISSING = `${CHROMIUM} not found: install it with \`apt-get install -y chromium\` to run the browser export test`;

const dirs: string[] = [];
const tempDir = (prefix: string): string => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function chromium(args: string[]): Promise<string> {
  const profile = tempDir("pion-chromium-");
  const proc = Bun.spawn(
    [
      CHROMIUM,
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-dev-shm-usage",
      "--host-resolver-rules=MAP * ~NOTFOUND",
      `--user-data-dir=${profile}`,
      ...args,
    ],
    { stdin: "ignore", stdout: "pipe", stderr: "pipe", detached: true },
  );
  const kill = setTimeout(() => {
    try {
      process.kill(-proc.pid, "SIGKILL");
    } catch {
      // the group already exited
    }
  }, 15_000);
  try {
    const [stdout, stderr, code] = await Promise.all([proc.stdout.text(), proc.stderr.text(), proc.exited]);
    if (code !== 0) throw new Error(`chromium exited with ${code}:\n${stderr.slice(-2000)}`);
    return stdout;
  } finally {
    clearTimeout(kill);
  }
}

/** The DOM as Chromium serializes it after load: text nodes escape only &, < and >. */
const dumpDom = (file: string): Promise<string> => chromium(["--dump-dom", `file://${file}`]);
const domText = (s: string): string => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

function writePage(html: string, name: string): string {
  return writeHtmlExport(html, join(tempDir("pion-export-page-"), name));
}

/**
 * Structure only: the serialized DOM keeps quotes unescaped in text, so plain string checks would
 * see the payload text. The page's own script and data blocks, and the tree rows its script drew
 * (positioned with inline styles, their text set as text nodes), are set aside first.
 */
function expectNothingInjected(full: string): void {
  const dom = withoutOwnScripts(full, PAGE_SCRIPT).replace(/<div id="tree-spacer"[^>]*>[\s\S]*?<\/div><\/div>\s*<\/aside>/, "<div id=\"tree-spacer\"></div></div></aside>");
  expect(dom).toContain('<div id="tree-spacer"');
  expect(unexpectedMarkup(dom, [SAFE_LINK])).toEqual([]);
  const tags = tagsOf(dom);
  expect(tags.filter((t) => t.attrs.get("id") === "pwned" || t.name === "script")).toEqual([]);
  expect(tags.filter((t) => t.name === "a").map((t) => t.attrs.get("href"))).toEqual([SAFE_LINK]);
  expect(tags.filter((t) => t.name === "img").map((t) => t.attrs.get("src")?.slice(0, 22))).toEqual(["data:image/png;base64,"]);
}

function expectHostileTextVisible(dom: string): void {
  const title = `name ${HOSTILE} · pion session`;
  expect(dom).toContain(`<title>${domText(title)}</title>`);
  expect(dom).toContain(`<h1>${domText(`name ${HOSTILE}`)}</h1>`);
  expect(dom).toContain(`<div class="plain">${domText(`user ${HOSTILE}`)}</div>`);
  expect(dom).toContain(`<pre class="command">$ ${domText(`echo ${HOSTILE}`)}</pre>`);
  expect(dom).toContain(domText(PAYLOADS.script));
  expect(dom).toContain(domText("javascript:document.title='PWNED'"));
}

describeWith("exported HTML in headless Chromium", haveChromium ? undefined : MISSING, () => {

  const page = renderSessionHtml(hostileSession());

  test.concurrent("control: the same payload unescaped does run, so the checks below can see it", async () => {
    const file = writePage(`<!DOCTYPE html><title>ok</title><body>${PAYLOADS.img}${PAYLOADS.script}</body>`, "control.html");
    const dom = await dumpDom(file);
    expect(dom).toContain("<title>PWNED</title>");
    expect(dom).toContain('id="pwned"');
  });

  test.concurrent("the exported page keeps every payload as visible text", async () => {
    const dom = await dumpDom(writePage(page, "hostile.html"));
    expectNothingInjected(dom);
    expectHostileTextVisible(dom);
  });

  test.concurrent("escaping alone holds: the page without its CSP is just as inert", async () => {
    const meta = `<meta http-equiv="Content-Security-Policy" content="${CONTENT_SECURITY_POLICY}">`;
    expect(page).toContain(meta);
    const dom = await dumpDom(writePage(page.replace(meta, ""), "hostile-no-csp.html"));
    expectNothingInjected(dom);
    expectHostileTextVisible(dom);
  });

  test.concurrent("screenshot of an ordinary session followed by the hostile one", async () => {
    const sample = sampleSession();
    const shown = renderSessionHtml({ ...sample, entries: [...sample.entries, ...hostileSession().entries] });
    const out = join(mkdtempSync(join(tmpdir(), "pion-export-shot-")), "session.png");
    await chromium([`--screenshot=${out}`, "--window-size=1200,1600", "--hide-scrollbars", `file://${writePage(shown, "shot.html")}`]);
    expect(statSync(out).size).toBeGreaterThan(10_000);
    expect(readFileSync(out).subarray(1, 4).toString()).toBe("PNG");
    console.log(`export-browser: screenshot at ${out}`);
  });
});
