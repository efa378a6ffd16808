import { describe, expect, test } from "bun:test";
import { buildTree, collectLabels, type Entry, newEntryId, serializeChain, serializeTree, type TreeNode } from "../../../src/store/entries.ts";
import { assistant, chain, user } from "./helpers.ts";

const shape = (nodes: readonly TreeNode[]): unknown =>
  nodes.map((n) => ({ id: n.entry.id, ...(n.label ? { label: n.label } : {}), children: shape(n.children) }));

/** Walks JSON text with an explicit stack: checks balance outside strings and returns the max depth. */
function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) max = Math.max(max, ++depth);
    else if (c === 0x7d || c === 0x5d) {
      if (--depth < 0) throw new Error(`unbalanced at ${i}`);
    }
  }
  if (depth !== 0 || inString) throw new Error("unterminated");
  return max;
}

describe("buildTree", () => {
  test("branches, orphans as extra roots, children oldest first, labels", () => {
    const t = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
    const entries: Entry[] = [
      user("a", null, "root", t(1)),
      assistant("b", "a", "answer", t(2)),
      user("d", "b", "second branch, appended first but newer", t(9)),
      user("c", "b", "first branch", t(3)),
      user("o", "missing", "orphan", t(4)),
      user("s", "s", "self-parent", t(5)),
      { type: "label", id: "l1", parentId: "c", timestamp: t(6), targetId: "b", label: "checkpoint" },
      { type: "label", id: "l2", parentId: "l1", timestamp: t(7), targetId: "c", label: "gone" },
      { type: "label", id: "l3", parentId: "l2", timestamp: t(8), targetId: "c", label: undefined },
    ];
    const tree = buildTree(entries);
    expect(shape(tree)).toEqual([
      { id: "a", children: [{ id: "b", label: "checkpoint", children: [{ id: "c", children: [{ id: "l1", children: [{ id: "l2", children: [{ id: "l3", children: [] }] }] }] }, { id: "d", children: [] }] }] },
      { id: "o", children: [] },
      { id: "s", children: [] },
    ]);
    expect(tree[0]!.children[0]!.labelTimestamp).toBe(t(6));
    expect(collectLabels(entries)).toEqual(new Map([["b", { label: "checkpoint", timestamp: t(6) }]]));
    expect([...serializeTree(tree)].join("")).toBe(JSON.stringify(tree));
    expect([...serializeTree([])].join("")).toBe("[]");
  });

  test("a 100k-deep linear session builds and serializes without recursion", () => {
    const entries = chain(100_000);
    const tree = buildTree(entries);
    expect(tree).toHaveLength(1);
    let node = tree[0]!;
    let depth = 1;
    while (node.children.length > 0) {
      node = node.children[0]!;
      depth++;
    }
    expect(depth).toBe(100_000);
    const text = [...serializeTree(tree)].join("");
    expect(text.startsWith(`[{"entry":${JSON.stringify(entries[0])},"children":[{"entry":`)).toBe(true);
    // Outer "[", "{" and "[" per ancestor, the deepest node's "{", then its entry, message, content and text block.
    expect(jsonDepth(text)).toBe(1 + 2 * 99_999 + 1 + 4);
  });

  test("30k deep: the text parses back to the same chain", () => {
    const entries = chain(30_000);
    const parsed = JSON.parse([...serializeTree(buildTree(entries))].join("")) as TreeNode[];
    const seen: string[] = [];
    for (let n: TreeNode | undefined = parsed[0]; n; n = n.children[0]) seen.push(n.entry.id);
    expect(seen).toEqual(entries.map((e) => e.id));
  });
});

test("newEntryId gives 8 hex chars not yet used", () => {
  const taken = new Set<string>();
  for (let i = 0; i < 10_000; i++) {
    const id = newEntryId(taken);
    expect(taken.has(id)).toBe(false);
    taken.add(id);
  }
  expect([...taken].every((id) => /^[0-9a-f]{8}$/.test(id))).toBe(true);
});

test("serializeChain gives a linear session's tree text, labels included, from its rows in order", () => {
  const entries: Entry[] = chain(2500);
  const at = (i: number) => entries[i]!;
  const t = (n: number) => new Date(Date.parse("2026-03-01T00:00:00.000Z") + n).toISOString();
  entries.push({ type: "label", id: "l0000001", parentId: at(2499).id, timestamp: t(1), targetId: at(3).id, label: "three" });
  entries.push({ type: "label", id: "l0000002", parentId: "l0000001", timestamp: t(2), targetId: at(4).id, label: "four" });
  entries.push({ type: "label", id: "l0000003", parentId: "l0000002", timestamp: t(3), targetId: at(4).id, label: undefined });
  // Pages as the store gives them: each node opened in bytes, the ids, the label bodies.
  const enc = new TextEncoder();
  const pages = [entries.slice(0, 1000), entries.slice(1000, 2001), entries.slice(2001)].map((part) => ({
    openings: enc.encode(part.map((e) => `{"entry":${JSON.stringify(e)},"children":[`).join("")),
    ids: part.map((e) => e.id),
    labels: part.filter((e) => e.type === "label").map((e) => JSON.stringify(e)),
  }));
  const text = (pieces: Iterable<string | Uint8Array>) => [...pieces].map((p) => (typeof p === "string" ? p : new TextDecoder().decode(p))).join("");
  expect(text(serializeChain(pages))).toBe([...serializeTree(buildTree(entries))].join(""));
  expect(text(serializeChain([]))).toBe("[]");
});
