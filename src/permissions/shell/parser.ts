import { readFileSync } from "node:fs";
import type { Node, Parser } from "web-tree-sitter";
import GRAMMAR_PATH from "tree-sitter-bash/tree-sitter-bash.wasm" with { type: "file" };
import ENGINE_PATH from "web-tree-sitter/web-tree-sitter.wasm" with { type: "file" };

/**
 * Bash lines are read by tree-sitter's bash grammar (web-tree-sitter), loaded on the first
 * line a rule has to judge: about 30 ms once, then tens of microseconds a line. Both
 * WebAssembly files are embedded in the binary and handed to the engine as bytes, so nothing
 * is looked up beside pion or in the working directory.
 */
let loading: Promise<Parser> | undefined;

function loadParser(): Promise<Parser> {
  loading ??= (async () => {
    const { Parser, Language } = await import("web-tree-sitter");
    await Parser.init({ wasmBinary: readFileSync(ENGINE_PATH) });
    const language = await Language.load(readFileSync(GRAMMAR_PATH));
    const parser = new Parser();
    parser.setLanguage(language);
    return parser;
  })();
  return loading;
}

/** Reads bash source into syntax trees; synchronous once loaded, so a nested script (`sh -c`) is read in place. */
export interface BashParser {
  /** `read(root)` on the tree of `source`; the tree is freed when it returns, so `read` must not keep nodes. */
  read<T>(source: string, read: (root: Node) => T): T;
}

export async function loadBashParser(): Promise<BashParser> {
  const parser = await loadParser();
  return {
    read(source, read) {
      const tree = parser.parse(source);
      if (!tree) throw new Error("the bash parser returned no tree");
      try {
        return read(tree.rootNode);
      } finally {
        tree.delete();
      }
    },
  };
}
