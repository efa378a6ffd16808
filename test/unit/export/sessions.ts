import type { SessionHtmlInput } from "../../../src/export/html.ts";
import type { AssistantMessage, Usage } from "../../../src/providers/types.ts";
import type { AgentMessage, Entry } from "../../../src/store/entries.ts";

/** Payloads that would change the title or add #pwned if any of them ever ran. */
export const PAYLOADS = {
  script: `<script>document.title='PWNED';document.body.insertAdjacentHTML('beforeend','<p id="pwned">script</p>')</script>`,
  img: `<img src=x onerror="document.title='PWNED';document.body.insertAdjacentHTML('beforeend','<p id=pwned>img</p>')">`,
  svg: `"><svg onload="document.title='PWNED'"><p id="pwned">svg</p>`,
  attr: `' autofocus onfocus='document.title="PWNED"' x='`,
  iframe: `</pre></code></div><iframe srcdoc="<script>parent.document.title='PWNED'</script>"></iframe>`,
} as const;

export const HOSTILE = Object.values(PAYLOADS).join(" ");

/** Markdown built to make a naive renderer backtrack or nest without bound (also timed in bench/latency.ts). */
export const PATHOLOGICAL_MARKDOWN: readonly string[] = [
  "*a ".repeat(30_000),
  "_".repeat(60_000),
  "[".repeat(30_000) + "](",
  "`".repeat(5_000) + " x" + "``a".repeat(10_000),
  "**".repeat(20_000) + "x" + "**".repeat(20_000),
  ">".repeat(20_000) + " deep",
  "- ".repeat(5_000) + "x",
  Array.from({ length: 3_000 }, (_, i) => `${" ".repeat(i % 40)}- item`).join("\n"),
  "h".repeat(60_000),
];
export const JS_LINK = "javascript:document.title='PWNED'";
export const SAFE_LINK = "https://example.com/docs?a=1&b=2";

let seq = 0;
const ts = "2025-01-02T03:04:05.000Z";
type EntryBody<E> = E extends Entry ? Omit<E, "id" | "parentId" | "timestamp"> : never;
export const entry = (e: EntryBody<Entry>): Entry => ({ id: `e${++seq}`, parentId: null, timestamp: ts, ...e });
export const message = (m: AgentMessage): Entry => entry({ type: "message", message: m });

export function usage(input: number, output: number, cost: number): Usage {
  return {
    input,
    output,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: input + output,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: cost },
  };
}

export function assistant(content: AssistantMessage["content"], extra: Partial<AssistantMessage> = {}): AssistantMessage {
  return {
    role: "assistant",
    content,
    api: "scripted",
    provider: "fake",
    model: "fake-model",
    usage: usage(100, 20, 0.0015),
    stopReason: "stop",
    timestamp: 1,
    ...extra,
  };
}

/** A 1x1 transparent PNG. */
export const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

/** A session with a hostile payload in every field the page shows. */
export function hostileSession(): SessionHtmlInput {
  const markdown = [
    `# Heading ${HOSTILE}`,
    `Some **bold ${HOSTILE}** and \`code ${HOSTILE}\` and _italic_.`,
    "```" + `html"><script>document.title='PWNED'</script>`,
    HOSTILE,
    "```",
    `- item ${HOSTILE}`,
    `- [click ${PAYLOADS.svg}](${JS_LINK})`,
    `- [a safe link](${SAFE_LINK})`,
    `- ![alt ${PAYLOADS.img}](${JS_LINK})`,
    `| col ${PAYLOADS.img} |`,
    "| --- |",
    `| ${PAYLOADS.script} |`,
    `> quoted ${HOSTILE}`,
  ].join("\n");
  const entries: Entry[] = [
    entry({ type: "session_info", name: `renamed ${HOSTILE}` }),
    entry({ type: "model_change", provider: `prov ${HOSTILE}`, modelId: `model ${HOSTILE}` }),
    entry({ type: "thinking_level_change", thinkingLevel: `high ${HOSTILE}` }),
    message({
      role: "user",
      content: [
        { type: "text", text: `user ${HOSTILE}` },
        { type: "image", mimeType: `image/png" onerror="document.title='PWNED'`, data: PNG },
        { type: "image", mimeType: "image/png", data: `${PNG}" onerror="document.title='PWNED'` },
        { type: "image", mimeType: "image/svg+xml", data: btoa(`<svg onload="document.title='PWNED'"/>`) },
        { type: "image", mimeType: "image/png", data: PNG },
      ],
      timestamp: 1,
    }),
    message(
      assistant(
        [
          { type: "thinking", thinking: `thinking ${HOSTILE}` },
          { type: "text", text: markdown },
          { type: "toolCall", id: `call ${HOSTILE}`, name: `tool ${HOSTILE}`, arguments: { [`key ${HOSTILE}`]: `value ${HOSTILE}` } },
        ],
        { provider: `provider ${HOSTILE}`, model: `model ${HOSTILE}`, stopReason: "toolUse" },
      ),
    ),
    message({
      role: "toolResult",
      toolCallId: `call ${HOSTILE}`,
      toolName: `tool ${HOSTILE}`,
      content: [{ type: "text", text: `result ${HOSTILE}\n${"line\n".repeat(40)}` }],
      isError: true,
      timestamp: 1,
    }),
    message({
      role: "bashExecution",
      command: `echo ${HOSTILE}`,
      output: `output ${HOSTILE}`,
      exitCode: 1,
      cancelled: false,
      truncated: true,
      fullOutputPath: `/tmp/${HOSTILE}`,
      timestamp: 1,
    }),
    entry({ type: "compaction", summary: `compaction ${HOSTILE}`, firstKeptEntryId: "e1", tokensBefore: 1234 }),
    entry({ type: "branch_summary", fromId: "e1", summary: `branch ${HOSTILE}` }),
    entry({ type: "custom_message", customType: `ext ${HOSTILE}`, content: `custom ${HOSTILE}`, display: true }),
    entry({ type: "label", targetId: "e1", label: `label ${HOSTILE}` }),
    message(assistant([{ type: "text", text: "" }], { stopReason: "error", errorMessage: `error ${HOSTILE}` })),
  ];
  return {
    sessionId: `id ${HOSTILE}`,
    name: `name ${HOSTILE}`,
    cwd: `/home/${HOSTILE}`,
    model: { provider: `p ${HOSTILE}`, id: `m ${HOSTILE}` },
    entries,
    exportedAt: new Date("2025-01-02T03:04:05.000Z"),
  };
}

export const ALLOWED_TAGS: ReadonlySet<string> = new Set(
  ("html head meta title style body main header footer section div span p h1 h2 h3 h4 h5 h6 dl dt dd code pre strong em del " +
    "a ul ol li blockquote hr br details summary img table thead tbody tr th td aside button label input").split(" "),
);
export const ALLOWED_ATTRS: ReadonlySet<string> = new Set(
  ("lang charset http-equiv content name class href rel target src alt start open " +
    // the page's own controls and entry wrappers (their values are pion's or an escaped entry id)
    "id data-id hidden type placeholder aria-label autocomplete checked data-filter title role tabindex download").split(" "),
);

/**
 * The page without its own script and data blocks: what is left must be inert markup. The data
 * blocks are JSON with every "<" escaped, so they cannot end early; `ownScript` is the page's
 * one executable script, which must be exactly pion's.
 */
export function withoutOwnScripts(page: string, ownScript: string): string {
  const data = /<script type="application\/(json|gzip)" id="pion-(rows|jsonl)">([^<]*)<\/script>/g;
  const stripped = page.replace(data, "");
  const own = `<script>${ownScript}</script>`;
  if (stripped.split(own).length !== 2) throw new Error("the page must hold its own script exactly once");
  return stripped.replace(own, "");
}

export interface Tag {
  name: string;
  attrs: Map<string, string>;
}

/**
 * Every start tag of a page or of a serialized DOM. Text never holds a raw `<` (it is
 * escaped), so a `<` followed by a letter always opens a real element.
 */
export function tagsOf(page: string): Tag[] {
  const tags: Tag[] = [];
  for (const m of page.matchAll(/<([a-zA-Z][^\s/>]*)((?:[^>"']|"[^"]*"|'[^']*')*)>/g)) {
    const attrs = new Map<string, string>();
    for (const a of m[2]!.matchAll(/([^\s="'>/]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?/g)) {
      attrs.set(a[1]!.toLowerCase(), (a[2] ?? a[3] ?? a[4] ?? "").replaceAll("&quot;", '"').replaceAll("&amp;", "&"));
    }
    tags.push({ name: m[1]!.toLowerCase(), attrs });
  }
  return tags;
}

/** Only known elements and attributes; links only to `allowedLinks`, images only as data: URLs. */
export function unexpectedMarkup(page: string, allowedLinks: readonly string[]): string[] {
  const problems: string[] = [];
  for (const { name, attrs } of tagsOf(page)) {
    if (!ALLOWED_TAGS.has(name)) problems.push(`<${name}>`);
    for (const [attr, value] of attrs) {
      if (!ALLOWED_ATTRS.has(attr)) problems.push(`<${name} ${attr}=${JSON.stringify(value)}>`);
      if (attr === "href" && !allowedLinks.includes(value)) problems.push(`<${name} href=${JSON.stringify(value)}>`);
      if (attr === "src" && !/^data:image\/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/]+=*$/.test(value)) problems.push(`<${name} src=${JSON.stringify(value)}>`);
    }
    if (name === "a" && !attrs.get("rel")?.includes("noopener")) problems.push("<a> without rel=noopener");
  }
  return problems;
}

/** An ordinary session, for looking at the page (screenshots) and for rendering checks. */
export function sampleSession(): SessionHtmlInput {
  const reply = [
    "## Plan",
    "The parser drops the **last line** when the input has no trailing newline. I will:",
    "",
    "1. read `src/rpc/jsonl.ts`",
    "2. add a test for the *unterminated* line",
    "3. fix the loop",
    "",
    "```ts",
    "buf += dec.decode();",
    "if (buf.length > 0) yield dropCr(buf);",
    "```",
    "",
    "See [the JSONL spec](https://jsonlines.org/) for details.",
  ].join("\n");
  return {
    sessionId: "0f3a9c1e",
    name: "Fix the JSONL reader",
    cwd: "/home/dev/pion",
    model: { provider: "anthropic", id: "claude-sonnet-4-5" },
    exportedAt: new Date("2025-01-02T03:04:05.000Z"),
    entries: [
      entry({ type: "model_change", provider: "anthropic", modelId: "claude-sonnet-4-5" }),
      entry({ type: "thinking_level_change", thinkingLevel: "medium" }),
      message({ role: "user", content: "The JSONL reader loses the last record when stdin has no trailing newline. Fix it.", timestamp: 1 }),
      message(
        assistant(
          [
            { type: "thinking", thinking: "The reader probably only yields on `\\n`. Check the end of the stream." },
            { type: "text", text: reply },
            { type: "toolCall", id: "toolu_01", name: "read", arguments: { path: "src/rpc/jsonl.ts", offset: 1, limit: 40 } },
          ],
          { provider: "anthropic", model: "claude-sonnet-4-5", stopReason: "toolUse", usage: usage(5321, 412, 0.0221) },
        ),
      ),
      message({
        role: "toolResult",
        toolCallId: "toolu_01",
        toolName: "read",
        content: [{ type: "text", text: "export async function* jsonLines(input) {\n  const dec = new TextDecoder();\n  let buf = \"\";\n}" }],
        isError: false,
        timestamp: 1,
      }),
      message({ role: "bashExecution", command: "bun test test/unit/rpc", output: " 12 pass\n 1 fail\n", exitCode: 1, cancelled: false, truncated: false, timestamp: 1 }),
      message(
        assistant([{ type: "text", text: "Fixed: the reader now yields the unterminated last line. All 13 tests pass." }], {
          provider: "anthropic",
          model: "claude-sonnet-4-5",
          usage: usage(6120, 95, 0.0198),
        }),
      ),
    ],
  };
}
