/** The page's only stylesheet, inlined: no fonts, images or imports, so it loads nothing. */
export const PAGE_CSS = `
:root { color-scheme: light dark; --bg: #f6f7f9; --card: #fff; --fg: #1d2127; --muted: #667085; --line: #dde1e7;
  --user: #eef4ff; --tool: #f3f4f6; --code: #f1f3f5; --err: #b42318; --errbg: #fef3f2; --accent: #2f5fd0; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #14161a; --card: #1c1f24; --fg: #e4e7ec; --muted: #98a2b3; --line: #2f343c;
    --user: #1b2740; --tool: #22262c; --code: #262a31; --err: #f97066; --errbg: #2d1b1b; --accent: #7aa2ff; }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
main { max-width: 980px; margin: 0 auto; padding: 24px 16px 64px; }
body.ready main { margin-left: calc(var(--side) + 24px); margin-right: auto; }
:root { --side: 340px; }
#sidebar { display: none; }
body.ready #sidebar { display: flex; flex-direction: column; position: fixed; top: 0; left: 0; bottom: 0; width: var(--side);
  background: var(--card); border-right: 1px solid var(--line); padding: 10px; gap: 6px; font-size: 13px; }
#search { width: 100%; padding: 6px 8px; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); font: inherit; }
.filters { display: flex; flex-wrap: wrap; gap: 4px; }
.filters button { font: inherit; font-size: 12px; padding: 2px 8px; border: 1px solid var(--line); border-radius: 999px; background: var(--bg); color: var(--fg); cursor: pointer; }
.filters button.active { background: var(--accent); border-color: var(--accent); color: #fff; }
.toggles { display: flex; flex-wrap: wrap; gap: 10px; color: var(--muted); }
.tree-meta { color: var(--muted); font-size: 12px; }
#tree { position: relative; flex: 1; overflow: auto; border-top: 1px solid var(--line); outline: none; }
#tree-spacer { position: relative; }
#tree .row { position: absolute; left: 0; right: 0; height: 26px; line-height: 26px; white-space: nowrap; overflow: hidden;
  text-overflow: ellipsis; cursor: pointer; border-radius: 4px; padding-right: 6px; }
#tree .row:hover { background: var(--tool); }
#tree .row.on-path { background: var(--user); }
#tree .row.selected { outline: 2px solid var(--accent); outline-offset: -2px; }
#tree .row .kind { display: inline-block; min-width: 62px; color: var(--muted); font-size: 11px; text-transform: uppercase; }
#tree .row.k-compaction .kind, #tree .row.k-branch .kind { color: var(--accent); }
#tree .row .badge { margin-left: 6px; font-size: 11px; }
#tree .row .leaf-mark { border-color: var(--accent); color: var(--accent); }
mark { background: #ffd54a; color: #000; border-radius: 2px; }
.ent { content-visibility: auto; contain-intrinsic-size: auto 160px; }
.ent.picked > * { box-shadow: 0 0 0 2px var(--accent); }
body.hide-thinking details.thinking { display: none; }
body.hide-tools .tool-output { display: none; }
.hidden-msg { display: none; }
body.show-hidden .hidden-msg { display: block; }
details.context { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 8px 16px; }
dl.tools dt { margin-top: 6px; }
dl.tools dd { margin: 0 0 0 12px; color: var(--muted); white-space: pre-wrap; }
pre.diff { white-space: pre; }
pre.diff .dl { display: inline-block; min-width: 100%; }
pre.diff .add { background: rgba(46, 160, 67, .18); }
pre.diff .del { background: rgba(248, 81, 73, .18); }
pre.diff .skip, pre.diff .hunk, pre.diff .file { color: var(--muted); }
.tool-name .target { font-weight: 400; font-family: ui-monospace, Menlo, monospace; font-size: 13px; }
details.more > summary { font-size: 12px; }
@media (max-width: 900px) { body.ready #sidebar { position: static; width: auto; height: 50vh; } body.ready main { margin-left: auto; } }
code, pre, .mono { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 13px; }
pre { margin: 6px 0; padding: 10px 12px; background: var(--code); border-radius: 6px; overflow-x: auto;
  white-space: pre-wrap; overflow-wrap: anywhere; }
:not(pre) > code { background: var(--code); padding: 1px 4px; border-radius: 4px; overflow-wrap: anywhere; }
a { color: var(--accent); }
header.session { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 16px 20px; margin-bottom: 20px; }
header.session h1 { margin: 0 0 10px; font-size: 22px; overflow-wrap: anywhere; }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; margin: 0; }
dl.meta dt { color: var(--muted); }
dl.meta dd { margin: 0; overflow-wrap: anywhere; }
.entry { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 10px 16px; margin: 12px 0; }
.entry.user { background: var(--user); }
.entry.tool-result, .entry.bash { background: var(--tool); }
.entry.tool-result pre, .entry.bash pre { background: var(--card); }
.entry.error { border-color: var(--err); }
.entry-head { display: flex; gap: 10px; align-items: baseline; color: var(--muted); font-size: 12px; margin-bottom: 4px; }
.entry-head .role { font-weight: 600; color: var(--fg); text-transform: uppercase; letter-spacing: .04em; }
.badge { border: 1px solid var(--line); border-radius: 999px; padding: 0 8px; }
.plain { white-space: pre-wrap; overflow-wrap: anywhere; }
.note { color: var(--muted); font-size: 13px; margin: 6px 2px; }
.note.entry-note { text-align: center; }
.usage { color: var(--muted); font-size: 12px; margin-top: 6px; }
.error-text { color: var(--err); background: var(--errbg); border-radius: 6px; padding: 6px 10px; margin: 6px 0; white-space: pre-wrap; }
.tool-call { border-left: 3px solid var(--accent); padding-left: 10px; margin: 8px 0; }
.tool-name { font-weight: 600; }
.tool-name .id { color: var(--muted); font-weight: 400; font-size: 12px; margin-left: 8px; }
.tool-result.error .result-head { color: var(--err); }
.result-head { font-weight: 600; }
details { margin: 6px 0; }
details > summary { cursor: pointer; color: var(--muted); }
details.thinking { border-left: 3px solid var(--line); padding-left: 10px; font-style: italic; }
img.image { max-width: 100%; max-height: 480px; border: 1px solid var(--line); border-radius: 6px; display: block; margin: 6px 0; }
.md > :first-child { margin-top: 0; }
.md > :last-child { margin-bottom: 0; }
.md p { margin: 6px 0; }
.md h1, .md h2, .md h3, .md h4, .md h5, .md h6 { margin: 14px 0 6px; line-height: 1.3; }
.md h1 { font-size: 1.35em; } .md h2 { font-size: 1.2em; } .md h3 { font-size: 1.08em; }
.md h4, .md h5, .md h6 { font-size: 1em; }
.md ul, .md ol { margin: 6px 0; padding-left: 26px; }
.md li > p { margin: 0; }
.md blockquote { margin: 6px 0; padding-left: 12px; border-left: 3px solid var(--line); color: var(--muted); }
.md hr { border: 0; border-top: 1px solid var(--line); }
.md .code { margin: 8px 0; }
.md .code .lang { font: 11px/1.6 ui-monospace, Menlo, monospace; color: var(--muted); margin-bottom: -4px; }
.md .code pre { white-space: pre; }
.md .href { color: var(--muted); font-size: 12px; overflow-wrap: anywhere; }
.md .link { text-decoration: underline dotted; }
.md .table { overflow-x: auto; }
.md table { border-collapse: collapse; margin: 8px 0; }
.md th, .md td { border: 1px solid var(--line); padding: 4px 8px; }
.md .al-left { text-align: left; } .md .al-center { text-align: center; } .md .al-right { text-align: right; }
.summary { border-left: 3px solid var(--muted); padding-left: 10px; }
footer { color: var(--muted); font-size: 12px; text-align: center; margin-top: 28px; }
`;
