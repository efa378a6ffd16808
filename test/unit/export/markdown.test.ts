import { describe, expect, test } from "bun:test";
import { renderMarkdown, safeHttpUrl } from "../../../src/export/markdown.ts";
import { PATHOLOGICAL_MARKDOWN } from "./sessions.ts";

const md = (src: string): string => renderMarkdown(src).value;

/** The deepest element nesting in rendered HTML (void elements do not nest). */
function nesting(html: string): number {
  let depth = 0;
  let max = 0;
  for (const m of html.matchAll(/<(\/?)([a-z0-9]+)[^>]*>/g)) {
    if (m[2] === "br" || m[2] === "hr" || m[2] === "img") continue;
    depth += m[1] ? -1 : 1;
    max = Math.max(max, depth);
  }
  return max;
}

describe("renderMarkdown", () => {
  const cases: [string, string, string][] = [
    ["paragraphs and soft breaks", "one\ntwo\n\nthree", "<p>one<br>\ntwo</p><p>three</p>"],
    ["headings", "# Title\n### Sub ###", "<h1>Title</h1><h3>Sub</h3>"],
    ["bold, italic, strike", "**b** *i* _u_ __B__ ~~s~~", "<p><strong>b</strong> <em>i</em> <em>u</em> <strong>B</strong> <del>s</del></p>"],
    ["emphasis inside emphasis", "*a **b** c*", "<p><em>a <strong>b</strong> c</em></p>"],
    ["nested emphasis", "**bold *and italic***", "<p><strong>bold <em>and italic</em></strong></p>"],
    ["snake_case stays text", "call my_var_name and 2*3*4", "<p>call my_var_name and 2<em>3</em>4</p>"],
    ["inline code keeps markup inert", "use `a <b> **c**` here", "<p>use <code>a &lt;b&gt; **c**</code> here</p>"],
    ["double-backtick code", "``a ` b``", "<p><code>a ` b</code></p>"],
    ["unmatched backticks", "a ` b", "<p>a ` b</p>"],
    ["backslash escapes", "\\*not em\\* \\<b>", "<p>*not em* &lt;b&gt;</p>"],
    ["fenced code with language", "```ts\nconst a = 1 < 2;\n\n**x**\n```", '<div class="code"><div class="lang">ts</div><pre><code>const a = 1 &lt; 2;\n\n**x**</code></pre></div>'],
    ["tilde fence, no language, unterminated", "~~~\nx\n```\ny", '<div class="code"><pre><code>x\n```\ny</code></pre></div>'],
    ["unordered list", "- a\n- b\n* c", "<ul><li><p>a</p></li><li><p>b</p></li></ul><ul><li><p>c</p></li></ul>"],
    ["ordered list with start", "3. a\n4. b", '<ol start="3"><li><p>a</p></li><li><p>b</p></li></ol>'],
    ["nested list and continuation", "1. a\n   - x\n   - y\n2. b\n   more", "<ol><li><p>a</p><ul><li><p>x</p></li><li><p>y</p></li></ul></li><li><p>b<br>\nmore</p></li></ol>"],
    ["loose list", "- a\n\n- b\n\nafter", "<ul><li><p>a</p></li><li><p>b</p></li></ul><p>after</p>"],
    ["block quote", "> quoted\n> **text**", "<blockquote><p>quoted<br>\n<strong>text</strong></p></blockquote>"],
    ["rule", "a\n\n---\n\nb", "<p>a</p><hr><p>b</p>"],
    [
      "table",
      "| a | b |\n|:--|--:|\n| `x|y` | **z** |",
      '<div class="table"><table><thead><tr><th class="al-left">a</th><th class="al-right">b</th></tr></thead><tbody><tr><td class="al-left">`x</td><td class="al-right">y`</td></tr></tbody></table></div>',
    ],
    [
      "http link: anchor with rel=noopener, href shown",
      "see [docs](https://example.com/a?b=1&c=2)",
      '<p>see <a href="https://example.com/a?b=1&amp;c=2" rel="noopener noreferrer nofollow" target="_blank">docs</a> <span class="href">(https://example.com/a?b=1&amp;c=2)</span></p>',
    ],
    ["javascript: link is text", "[click](javascript:alert(1))", "<p>[click](javascript:alert(1))</p>"],
    ["javascript: link without parens is text plus href", "[click](javascript:void0)", '<p><span class="link">click</span> <span class="href">(javascript:void0)</span></p>'],
    ["data: link is text", "[x](data:text/html;base64,PHNjcmlwdD4=)", '<p><span class="link">x</span> <span class="href">(data:text/html;base64,PHNjcmlwdD4=)</span></p>'],
    [
      "bare and angle URLs",
      "go https://a.example/x. or <http://b.example>",
      '<p>go <a href="https://a.example/x" rel="noopener noreferrer nofollow" target="_blank">https://a.example/x</a>. or <a href="http://b.example/" rel="noopener noreferrer nofollow" target="_blank">http://b.example</a></p>',
    ],
    ["images are never loaded", "![logo](https://x.example/l.png)", '<p><span class="md-img">[image: logo]</span> <a href="https://x.example/l.png" rel="noopener noreferrer nofollow" target="_blank">https://x.example/l.png</a></p>'],
    ["raw HTML is text", '<b onclick="x">hi</b>', "<p>&lt;b onclick=&quot;x&quot;&gt;hi&lt;/b&gt;</p>"],
    ["CRLF input", "a\r\nb", "<p>a<br>\nb</p>"],
  ];
  for (const [name, src, out] of cases) test(name, () => expect(md(src)).toBe(out));

  test("link text and fence language are escaped", () => {
    expect(md('[<img src=x onerror=alert(1)>](https://e.example/")')).not.toContain("<img");
    expect(md('```"><script>\nx\n```')).toBe('<div class="code"><div class="lang">&quot;&gt;&lt;script&gt;</div><pre><code>x</code></pre></div>');
  });

  test("pathological input renders, and shallow: nesting stays within the renderer's depth limits (its time: bench/latency.ts)", () => {
    // 6 levels of blocks (ul > li each), 8 of inline emphasis, and the paragraph around them.
    const bound = 2 * 6 + 8 + 2;
    for (const src of PATHOLOGICAL_MARKDOWN) {
      const out = md(src);
      expect(out.length).toBeGreaterThan(0);
      expect(nesting(out)).toBeLessThanOrEqual(bound);
    }
    expect(nesting("<ul><li><p><em>x</em></p></li></ul>")).toBe(4);
  });
});

test("safeHttpUrl accepts only http(s)", () => {
  expect(safeHttpUrl("https://example.com/a b")).toBe("https://example.com/a%20b");
  expect(safeHttpUrl("HTTP://EXAMPLE.com")).toBe("http://example.com/");
  for (const bad of ["javascript:alert(1)", "JAVASCRIPT:x", " https://x.example", "data:text/html,x", "//evil.example", "/rel", "https://"]) {
    expect(safeHttpUrl(bad)).toBeUndefined();
  }
});
