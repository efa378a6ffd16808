import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { CONTENT_SECURITY_POLICY, defaultExportName, renderSessionHtml, type SessionHtmlInput, writeHtmlExport } from "../../../src/export/html.ts";
import { escapeHtml } from "../../../src/export/safe-html.ts";
import type { Entry } from "../../../src/store/entries.ts";
import PAGE_SCRIPT from "../../../src/export/page-script.js" with { type: "text" };
import { assistant, entry, HOSTILE, hostileSession, JS_LINK, message, PAYLOADS, PNG, SAFE_LINK, unexpectedMarkup, usage, withoutOwnScripts } from "./sessions.ts";

function expectInert(full: string, allowedLinks: readonly string[] = []): void {
  const page = withoutOwnScripts(full, PAGE_SCRIPT);
  expect(unexpectedMarkup(page, allowedLinks)).toEqual([]);
  expect(page).not.toMatch(/<(script|svg|iframe|link|object|embed|form|base)\b/i);
  expect(page.match(/<input\b/g)?.length ?? 0).toBeLessThanOrEqual(4);
  expect(page).not.toMatch(/url\(|@import/i);
}

const page = (over: Partial<SessionHtmlInput> = {}): string =>
  renderSessionHtml({ sessionId: "s1", cwd: "/w", entries: [], exportedAt: new Date(0), ...over });

describe("renderSessionHtml: hostile content", () => {
  test("the whole hostile session yields only allowed tags and attributes, and one http link", () => {
    const html = renderSessionHtml(hostileSession());
    expectInert(html, [SAFE_LINK]);
    expect(html).toContain(`<a href="${escapeHtml(SAFE_LINK)}" rel="noopener noreferrer nofollow" target="_blank">a safe link</a>`);
    expect(html).not.toMatch(/=\s*["']?\s*javascript:/i);
    expect(html).toContain(escapeHtml(JS_LINK));
    expect(html.match(/<img /g)?.length).toBe(1);
    expect(html).toContain(`src="data:image/png;base64,${PNG}"`);
    expect(html).toContain("[image omitted: image/svg+xml]");
    expect(html).toContain(`[image omitted: image/png&quot; onerror=&quot;document.title=&#39;PWNED&#39;]`);
  });

  const fields: [string, Partial<SessionHtmlInput>, string?][] = [
    ["session name", { name: HOSTILE }],
    ["session id", { sessionId: HOSTILE }],
    ["cwd", { cwd: HOSTILE }],
    ["model", { model: { provider: HOSTILE, id: HOSTILE } }, `${HOSTILE}/${HOSTILE}`],
    ["user text", { entries: [message({ role: "user", content: HOSTILE, timestamp: 1 })] }],
    ["assistant markdown", { entries: [message(assistant([{ type: "text", text: `${HOSTILE}\n\n**${HOSTILE}**` }]))] }],
    ["fenced code", { entries: [message(assistant([{ type: "text", text: "```\n" + HOSTILE + "\n```" }]))] }],
    ["inline code", { entries: [message(assistant([{ type: "text", text: `\`${HOSTILE}\`` }]))] }],
    ["thinking", { entries: [message(assistant([{ type: "thinking", thinking: HOSTILE }]))] }],
    ["tool call name", { entries: [message(assistant([{ type: "toolCall", id: "c", name: HOSTILE, arguments: {} }]))] }],
    ["tool call id", { entries: [message(assistant([{ type: "toolCall", id: HOSTILE, name: "t", arguments: {} }]))] }],
    ["tool call arguments", { entries: [message(assistant([{ type: "toolCall", id: "c", name: "t", arguments: { [HOSTILE]: HOSTILE } }]))] }, JSON.stringify(HOSTILE)],
    ["assistant model", { entries: [message(assistant([], { provider: HOSTILE, model: HOSTILE }))] }, `${HOSTILE}/${HOSTILE}`],
    ["error message", { entries: [message(assistant([], { stopReason: "error", errorMessage: HOSTILE }))] }],
    ...(["toolName", "toolCallId"] as const).map((k): [string, Partial<SessionHtmlInput>] => [
      `tool result ${k}`,
      { entries: [message({ role: "toolResult", toolCallId: "c", toolName: "t", content: [], isError: false, timestamp: 1, [k]: HOSTILE })] },
    ]),
    ["tool result text", { entries: [message({ role: "toolResult", toolCallId: "c", toolName: "t", content: [{ type: "text", text: HOSTILE }], isError: true, timestamp: 1 })] }],
    ...(["command", "output", "fullOutputPath"] as const).map((k): [string, Partial<SessionHtmlInput>] => [
      `bash ${k}`,
      { entries: [message({ role: "bashExecution", command: "c", output: "o", exitCode: 0, cancelled: false, truncated: false, timestamp: 1, [k]: HOSTILE })] },
    ]),
    ["compaction summary", { entries: [entry({ type: "compaction", summary: HOSTILE, firstKeptEntryId: "x", tokensBefore: 1 })] }],
    ["branch summary", { entries: [entry({ type: "branch_summary", fromId: "x", summary: HOSTILE })] }],
    ["compaction summary message", { entries: [message({ role: "compactionSummary", summary: HOSTILE, tokensBefore: 1, timestamp: 1 })] }],
    ["branch summary message", { entries: [message({ role: "branchSummary", summary: HOSTILE, fromId: "x", timestamp: 1 })] }],
    ["custom message type", { entries: [entry({ type: "custom_message", customType: HOSTILE, content: "c", display: true })] }],
    ["custom message content", { entries: [entry({ type: "custom_message", customType: "t", content: [{ type: "text", text: HOSTILE }], display: false })] }],
    ["custom role message", { entries: [message({ role: "custom", customType: HOSTILE, content: HOSTILE, display: true, timestamp: 1 })] }],
    ["model change", { entries: [entry({ type: "model_change", provider: HOSTILE, modelId: HOSTILE })] }, `${HOSTILE}/${HOSTILE}`],
    ["thinking level", { entries: [entry({ type: "thinking_level_change", thinkingLevel: HOSTILE })] }],
    ["session_info name", { entries: [entry({ type: "session_info", name: HOSTILE })] }],
    ["context edit target", { entries: [entry({ type: "context_edit", targetId: HOSTILE, replacement: null })] }],
    ...(["toolName", "subject", "message"] as const).map((k): [string, Partial<SessionHtmlInput>] => [
      `permission ${k}`,
      { entries: [entry({ type: "permission", toolCallId: "c", toolName: "bash", subject: "s", decision: "deny", by: "host", mode: "ask", reason: "r", [k]: HOSTILE })] },
    ]),
    ["permission rule", { entries: [entry({ type: "permission", toolCallId: "c", toolName: "bash", decision: "deny", by: "rule", mode: "auto", rule: HOSTILE, reason: "r" })] }],
    ["label", { entries: ((u: Entry) => [u, entry({ type: "label", targetId: u.id, label: HOSTILE })])(message({ role: "user", content: "u", timestamp: 1 })) }],
    ["entry timestamp", { entries: [{ ...message({ role: "user", content: "u", timestamp: 1 }), timestamp: HOSTILE }] }],
  ];
  for (const [field, over, shown = HOSTILE] of fields) {
    test(`${field} is escaped text`, () => {
      const html = page(over);
      expectInert(html);
      expect(html).toContain(escapeHtml(shown));
      for (const p of Object.values(PAYLOADS)) expect(html).not.toContain(p);
    });
  }

  test("unknown entry types and roles from a newer writer are named, escaped, and do not break the page", () => {
    const odd = JSON.parse(JSON.stringify([{ id: "a", parentId: null, timestamp: "t", type: HOSTILE }])) as SessionHtmlInput["entries"];
    const html = page({ entries: odd });
    expectInert(html);
    expect(html).toContain(`Entry of unknown type <code>${escapeHtml(HOSTILE)}</code>`);
  });
});

describe("renderSessionHtml: page", () => {
  test("strict CSP: only the page's own script, by hash; nothing fetched from the network", () => {
    const html = renderSessionHtml(hostileSession());
    expect(html).toContain(`<meta http-equiv="Content-Security-Policy" content="${CONTENT_SECURITY_POLICY}">`);
    const hash = new Bun.CryptoHasher("sha256").update(PAGE_SCRIPT).digest("base64");
    expect(CONTENT_SECURITY_POLICY).toBe(`default-src 'none'; script-src 'sha256-${hash}'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'`);
    expect(html.match(/<script>/g)?.length).toBe(1);
    expect(html).not.toMatch(/(src|href)\s*=\s*["']?(https?:)?\/\/(?!example\.com\/docs)/i);
  });

  test("header shows name, id, cwd, model and usage totals over assistant messages", () => {
    const html = page({
      name: "Fix the parser",
      sessionId: "abc123",
      cwd: "/work/repo",
      model: { provider: "anthropic", id: "claude-x" },
      entries: [
        message({ role: "user", content: "hi", timestamp: 1 }),
        message(assistant([{ type: "text", text: "one" }], { usage: usage(1000, 200, 0.25) })),
        message(assistant([{ type: "text", text: "two" }], { usage: usage(3000, 300, 0.5) })),
      ],
    });
    expect(html).toContain("<title>Fix the parser · pion session</title>");
    expect(html).toContain("<h1>Fix the parser</h1>");
    expect(html).toContain("<code>abc123</code>");
    expect(html).toContain("<code>/work/repo</code>");
    expect(html).toContain("<code>anthropic/claude-x</code>");
    expect(html).toContain("1 user · 2 assistant · 0 tool results");
    expect(html).toContain("input 4,000 · output 500");
    expect(html).toContain("<dd>$0.7500</dd>");
    expect(html).toContain("input 1,000 · output 200 · $0.2500 · stop");
  });

  test("name and model fall back to the session_info entry and the last assistant message", () => {
    const html = page({ entries: [entry({ type: "session_info", name: "Named later" }), message(assistant([{ type: "text", text: "x" }]))] });
    expect(html).toContain("<h1>Named later</h1>");
    expect(html).toContain("<dt>Model</dt><dd><code>fake/fake-model</code></dd>");
  });

  test("thinking and arguments fold, long tool output shows its first lines and folds the rest; errors are marked", () => {
    const html = renderSessionHtml(hostileSession());
    expect(html).toContain('<details class="thinking"><summary>Thinking</summary>');
    expect(html).toMatch(/<section class="entry tool-result error">[\s\S]*?<pre class="output error-output">[\s\S]*?<details class="more"><summary>21 more lines<\/summary>/);
    expect(html).toContain('<section class="entry bash error">');
    expect(html).toContain("exit code 1 · output truncated");
    expect(html).toContain('<div class="error-text">Error: error ');
    const short = page({ entries: [message({ role: "toolResult", toolCallId: "c", toolName: "read", content: [{ type: "text", text: "ok" }], isError: false, timestamp: 1 })] });
    expect(short).toContain('<section class="entry tool-result">');
    expect(short).toContain('<pre class="output">ok</pre>');
    const args = page({ entries: [message(assistant([{ type: "toolCall", id: "c", name: "grep", arguments: { pattern: "a", path: "x".repeat(3000) } }]))] });
    expect(args).toContain("<summary>Arguments</summary>");
    expect(args).toContain("&quot;pattern&quot;: &quot;a&quot;,");
  });
});

describe("renderSessionHtml: the session browser", () => {
  test("every entry of every branch is in the tree rows; only the current branch is shown without the script", () => {
    const root = entry({ type: "model_change", provider: "p", modelId: "m" });
    const a = { ...message({ role: "user", content: "branch A", timestamp: 1 }), parentId: root.id };
    const b = { ...message({ role: "user", content: "branch B", timestamp: 2 }), parentId: root.id, timestamp: "2030-01-01T00:00:00.000Z" };
    const html = page({ entries: [root, a, b], leafId: b.id });
    const rows = JSON.parse(html.match(/<script type="application\/json" id="pion-rows">([^<]*)<\/script>/)![1]!);
    expect(rows.map((r: { id: string; d: number }) => [r.id, r.d])).toEqual([[root.id, 0], [a.id, 1], [b.id, 1]]);
    expect(rows.find((r: { id: string }) => r.id === b.id).leaf).toBe(1);
    expect(html).toContain(`<div class="ent" id="e-${a.id}" data-id="${a.id}" hidden>`);
    expect(html).toContain(`<div class="ent" id="e-${b.id}" data-id="${b.id}">`);
  });

  test("the reference's recorded system prompt is folded, its sections too; the tree calls it a setting", () => {
    const sys = message({ role: "system", content: "", sections: { preamble: "You are helpful.", rules: "Be brief." }, timestamp: 1 } as never);
    const html = page({ entries: [sys] });
    expect(html).toContain('<details class="context"><summary>System prompt</summary>');
    expect(html).toContain("<summary>rules</summary><pre>Be brief.</pre>");
    expect(html).toContain('"k":"setting","t":"System prompt"');
  });

  test("an old unified diff in edit details still renders with its marks; the numbered form too", () => {
    const result = (diff: string) => message({ role: "toolResult", toolCallId: "c", toolName: "edit", content: [{ type: "text", text: "ok" }], details: { diff }, isError: false, timestamp: 1 } as never);
    const old = page({ entries: [result("--- a/f\n+++ b/f\n@@ -1,1 +1,1 @@\n-x\n+y\n")] });
    expect(old).toContain('<span class="dl hunk">@@ -1,1 +1,1 @@</span>');
    expect(old).toContain('<span class="dl del">-x</span>');
    const now = page({ entries: [result(" 1 a\n-2 b\n+2 B")] });
    expect(now).toContain('<span class="dl ctx"> 1 a</span>');
    expect(now).toContain('<span class="dl add">+2 B</span>');
  });
});

describe("writeHtmlExport and defaultExportName", () => {
  test("creates the folder 0700, writes 0600, returns the absolute path", () => {
    const root = mkdtempSync(join(tmpdir(), "pion-export-"));
    try {
      const target = join(root, "a", "b", "out.html");
      const written = writeHtmlExport("<p>x</p>", relative(process.cwd(), target));
      expect(written).toBe(target);
      expect(readFileSync(target, "utf8")).toBe("<p>x</p>");
      expect(statSync(target).mode & 0o777).toBe(0o600);
      expect(statSync(join(root, "a", "b")).mode & 0o777).toBe(0o700);
      expect(writeHtmlExport("<p>y</p>", target)).toBe(target);
      expect(readFileSync(target, "utf8")).toBe("<p>y</p>");
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test("file names are slugs of the name, else of the id", () => {
    expect(defaultExportName("0f3a9c1e", "Fix the Parser!")).toBe("pion-session-fix-the-parser.html");
    expect(defaultExportName("0f3a9c1e")).toBe("pion-session-0f3a9c1e.html");
    expect(defaultExportName("0f3a9c1e", "../../etc/<x>")).toBe("pion-session-etc-x.html");
    expect(defaultExportName("0f3a9c1e", "Ünïcödé ✨")).toBe("pion-session-unicode.html");
    expect(defaultExportName("0f3a9c1e", "✨")).toBe("pion-session-0f3a9c1e.html");
    expect(defaultExportName("", "")).toBe("pion-session-export.html");
    expect(defaultExportName("x", "a".repeat(200))).toBe(`pion-session-${"a".repeat(60)}.html`);
  });
});
