// The exported page's only script (its hash is in the page's Content-Security-Policy). It reads
// the tree rows and the session file from JSON data blocks, draws the sidebar tree lazily, and
// shows the branch of the entry picked. Session text only ever enters the page as text nodes.
(() => {
  "use strict";
  const $ = (id) => document.getElementById(id);
  const rows = JSON.parse($("pion-rows").textContent);
  const byId = new Map(rows.map((r, i) => [r.id, i]));
  const children = new Map();
  for (const r of rows) {
    if (r.p !== null && byId.has(r.p)) {
      const list = children.get(r.p) || [];
      list.push(r.id);
      children.set(r.p, list);
    }
  }
  const leafRow = rows.find((r) => r.leaf);
  const ROW = 26;
  const state = { filter: "default", query: "", selected: leafRow ? leafRow.id : null, thinking: true, tools: true, hidden: false };
  let visible = [];
  const treeBox = $("tree");
  const spacer = $("tree-spacer");
  const search = $("search");
  const count = $("tree-count");

  // Hash: #entry=<id>&thinking=0&tools=0&hidden=1&filter=all
  function readHash() {
    const h = new URLSearchParams(location.hash.slice(1));
    if (h.get("entry") && byId.has(h.get("entry"))) state.selected = h.get("entry");
    state.thinking = h.get("thinking") !== "0";
    state.tools = h.get("tools") !== "0";
    state.hidden = h.get("hidden") === "1";
    if (h.get("filter")) state.filter = h.get("filter");
  }
  function writeHash() {
    const h = new URLSearchParams();
    if (state.selected) h.set("entry", state.selected);
    if (!state.thinking) h.set("thinking", "0");
    if (!state.tools) h.set("tools", "0");
    if (state.hidden) h.set("hidden", "1");
    if (state.filter !== "default") h.set("filter", state.filter);
    history.replaceState(null, "", `#${h.toString()}`);
  }

  const textCache = new Map();
  function entryText(id) {
    let t = textCache.get(id);
    if (t === undefined) {
      const el = $(`e-${id}`);
      const r = rows[byId.get(id)];
      t = `${r.t} ${r.label || ""} ${el ? el.textContent : ""}`.toLowerCase();
      textCache.set(id, t);
    }
    return t;
  }

  function passes(r) {
    if (r.leaf) return true;
    switch (state.filter) {
      case "all":
        return true;
      case "user-only":
        return r.k === "user";
      case "labeled-only":
        return r.label !== undefined;
      case "no-tools":
        return !r.quiet && r.k !== "tool";
      default:
        return !r.quiet;
    }
  }

  function refilter() {
    const tokens = state.query.toLowerCase().split(/\s+/).filter(Boolean);
    visible = [];
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i];
      if (!passes(r)) continue;
      if (tokens.length > 0) {
        const text = entryText(r.id);
        if (!tokens.every((t) => text.includes(t))) continue;
      }
      visible.push(i);
    }
    count.textContent = `${visible.length} of ${rows.length} entries`;
    spacer.style.height = `${visible.length * ROW}px`;
    draw();
  }

  const onPath = new Set();
  function markPath() {
    onPath.clear();
    for (let id = state.selected; id !== null && id !== undefined && byId.has(id) && !onPath.has(id); id = rows[byId.get(id)].p) onPath.add(id);
  }

  /** The text with each search token marked, as text nodes and <mark> elements. */
  function highlighted(text) {
    const frag = document.createDocumentFragment();
    const tokens = state.query.toLowerCase().split(/\s+/).filter(Boolean);
    if (tokens.length === 0) {
      frag.append(text);
      return frag;
    }
    const lower = text.toLowerCase();
    let at = 0;
    while (at < text.length) {
      let best = -1;
      let len = 0;
      for (const t of tokens) {
        const i = lower.indexOf(t, at);
        if (i !== -1 && (best === -1 || i < best)) {
          best = i;
          len = t.length;
        }
      }
      if (best === -1) break;
      frag.append(text.slice(at, best));
      const m = document.createElement("mark");
      m.textContent = text.slice(best, best + len);
      frag.append(m);
      at = best + len;
    }
    frag.append(text.slice(at));
    return frag;
  }

  function draw() {
    const top = treeBox.scrollTop;
    const first = Math.max(0, Math.floor(top / ROW) - 10);
    const last = Math.min(visible.length, Math.ceil((top + treeBox.clientHeight) / ROW) + 10);
    const frag = document.createDocumentFragment();
    for (let v = first; v < last; v++) {
      const r = rows[visible[v]];
      const el = document.createElement("div");
      el.className = `row k-${r.k}${r.id === state.selected ? " selected" : ""}${onPath.has(r.id) ? " on-path" : ""}${r.leaf ? " leaf" : ""}`;
      el.style.top = `${v * ROW}px`;
      el.style.paddingLeft = `${8 + Math.min(r.d, 12) * 14}px`;
      el.dataset.id = r.id;
      el.setAttribute("role", "treeitem");
      const kind = document.createElement("span");
      kind.className = "kind";
      kind.textContent = r.k;
      el.append(kind, highlighted(r.t));
      if (r.label) {
        const b = document.createElement("span");
        b.className = "badge";
        b.textContent = r.label;
        el.append(b);
      }
      if (r.leaf) {
        const b = document.createElement("span");
        b.className = "badge leaf-mark";
        b.textContent = "current";
        el.append(b);
      }
      frag.append(el);
    }
    spacer.replaceChildren(frag);
  }

  /** Show the branch through `id`: root to it, then on along the newest child to a leaf. */
  function showBranch(id, scroll) {
    state.selected = id;
    markPath();
    const shown = new Set(onPath);
    let tail = id;
    for (let kids = children.get(tail); kids && kids.length > 0; kids = children.get(tail)) {
      // Prefer the child on the way to the session's current leaf, else the newest.
      const leafward = kids.find((k) => leafPath.has(k));
      tail = leafward || kids[kids.length - 1];
      if (shown.has(tail)) break;
      shown.add(tail);
    }
    for (const el of document.querySelectorAll(".ent")) el.hidden = !shown.has(el.dataset.id);
    for (const el of document.querySelectorAll(".ent.picked")) el.classList.remove("picked");
    const target = $(`e-${id}`);
    if (target) {
      target.classList.add("picked");
      if (scroll) target.scrollIntoView({ block: "start" });
    }
    writeHash();
    draw();
  }

  const leafPath = new Set();
  for (let id = leafRow ? leafRow.id : null; id !== null && byId.has(id) && !leafPath.has(id); id = rows[byId.get(id)].p) leafPath.add(id);

  function applyToggles() {
    document.body.classList.toggle("hide-thinking", !state.thinking);
    document.body.classList.toggle("hide-tools", !state.tools);
    document.body.classList.toggle("show-hidden", state.hidden);
    $("toggle-thinking").checked = state.thinking;
    $("toggle-tools").checked = state.tools;
    $("toggle-hidden").checked = state.hidden;
    for (const b of document.querySelectorAll("button[data-filter]")) b.classList.toggle("active", b.dataset.filter === state.filter);
    writeHash();
  }

  function move(step) {
    if (visible.length === 0) return;
    let at = visible.findIndex((i) => rows[i].id === state.selected);
    at = at === -1 ? 0 : Math.max(0, Math.min(visible.length - 1, at + step));
    const id = rows[visible[at]].id;
    const y = at * ROW;
    if (y < treeBox.scrollTop) treeBox.scrollTop = y;
    else if (y + ROW > treeBox.scrollTop + treeBox.clientHeight) treeBox.scrollTop = y + ROW - treeBox.clientHeight;
    showBranch(id, true);
  }

  treeBox.addEventListener("scroll", draw, { passive: true });
  treeBox.addEventListener("click", (ev) => {
    const row = ev.target.closest(".row");
    if (row) showBranch(row.dataset.id, true);
  });
  search.addEventListener("input", () => {
    state.query = search.value;
    refilter();
  });
  for (const b of document.querySelectorAll("button[data-filter]")) {
    b.addEventListener("click", () => {
      state.filter = b.dataset.filter;
      applyToggles();
      refilter();
    });
  }
  $("toggle-thinking").addEventListener("change", (ev) => {
    state.thinking = ev.target.checked;
    applyToggles();
  });
  $("toggle-tools").addEventListener("change", (ev) => {
    state.tools = ev.target.checked;
    applyToggles();
  });
  $("toggle-hidden").addEventListener("change", (ev) => {
    state.hidden = ev.target.checked;
    applyToggles();
  });
  document.addEventListener("keydown", (ev) => {
    if (ev.key === "/" && document.activeElement !== search) {
      ev.preventDefault();
      search.focus();
    } else if (ev.key === "Escape" && document.activeElement === search) {
      search.blur();
    } else if ((ev.key === "ArrowDown" || ev.key === "ArrowUp") && document.activeElement !== search) {
      ev.preventDefault();
      move(ev.key === "ArrowDown" ? 1 : -1);
    }
  });

  // The session file, gzipped in base64: unpacked once the page is drawn, then offered as a download.
  const packed = $("pion-jsonl");
  const download = $("download-jsonl");
  async function offerDownload() {
    const bytes = Uint8Array.from(atob(packed.textContent.trim()), (c) => c.charCodeAt(0));
    const file = await new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"))).blob();
    download.href = URL.createObjectURL(new Blob([file], { type: "application/x-ndjson" }));
    download.hidden = false;
  }

  // The sidebar is laid out from here on (without the script the page shows the current branch only).
  document.body.classList.add("ready");
  readHash();
  markPath();
  applyToggles();
  refilter();
  if (state.selected) showBranch(state.selected, location.hash.includes("entry="));
  document.body.classList.add("drawn");
  if (packed && download) setTimeout(() => offerDownload().catch((err) => console.error(`the session file could not be unpacked: ${err}`)), 0);
})();
