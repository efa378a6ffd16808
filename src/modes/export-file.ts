import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { defaultExportName, renderSessionHtml, writeHtmlExport } from "../export/html.ts";
import { pathTo, type Entry } from "../store/entries.ts";
import { readJsonl } from "../store/jsonl.ts";

/**
 * `pion --export <session.jsonl> [output]`: every entry of the file as one HTML page, opened on
 * its latest branch (its last entry is the leaf, as when the file is opened), written where `output` says or under the
 * same default name as the export_html command. Returns the absolute path written.
 * Reads the file only (any v1-v3 file, the reference's included); no session store is opened.
 */
export function exportSessionFile(input: string, output: string | undefined, cwd: string): string {
  const file = resolve(cwd, input);
  const source = readJsonl(file);
  const byId = new Map<string, Entry>();
  let leaf: string | null = null;
  for (const { entry } of source.entries()) {
    byId.set(entry.id, entry);
    leaf = entry.id;
  }
  const branch = pathTo(byId, leaf);
  let model: { provider: string; id: string } | undefined;
  let name: string | undefined;
  for (const e of branch) {
    if (e.type === "model_change") model = { provider: e.provider, id: e.modelId };
    else if (e.type === "session_info") name = e.name;
  }
  const html = renderSessionHtml({
    sessionId: source.header.id,
    name,
    cwd: source.header.cwd ?? cwd,
    model,
    entries: [...byId.values()],
    leafId: leaf,
    jsonl: readFileSync(file, "utf8"),
  });
  return writeHtmlExport(html, output ? resolve(cwd, output) : join(cwd, defaultExportName(source.header.id, name)));
}
