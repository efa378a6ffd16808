import { basename, resolve } from "node:path";
import type { FoundBy } from "./source-info.ts";
import { errorMessage } from "../util/errors.ts";
import { listDir, pathKind, readTextIfFile, realPathOf, type ExplicitResources, type ResourceLocation, type ResourceScope } from "./files.ts";
import { parseFrontmatter } from "./frontmatter.ts";
import { foundFor, resourceSources, type ResourceSource } from "./load-order.ts";

export interface PromptTemplate {
  /** The file name without `.md`; invoked as `/name`. */
  name: string;
  description: string;
  /** The template text: front matter, leading blank lines and trailing whitespace removed. */
  content: string;
  filePath: string;
  location: ResourceLocation;
  /** How it was found (the reference's `sourceInfo`, without the path). */
  found: FoundBy;
}

export interface LoadedPromptTemplates {
  /** In load order (load-order.ts); one per name, the first loaded winning. */
  templates: PromptTemplate[];
  /** One line per skipped file, for the caller to print on stderr. */
  warnings: string[];
}

/**
 * The direct `.md` children of each conventional folder, and each path (a `.md` file or a folder
 * of them), in the sources' order (load-order.ts). The first template of a name wins, as in the
 * reference; a later one is left out with a warning, the same file reached twice silently.
 * `noDiscovery` (`--no-prompt-templates`) keeps only the `-e` packages' templates and the command
 * line's paths. Unreadable files are skipped with a warning.
 */
export function loadPromptTemplates(roots: ResourceScope, explicit: ExplicitResources = {}): LoadedPromptTemplates {
  const byName = new Map<string, PromptTemplate>();
  const files = new Set<string>();
  const warnings: string[] = [];
  const addFile = (filePath: string, source: ResourceSource) => {
    if (source.location !== "path" && explicit.listed?.enabled(filePath) === false) return;
    const file = realPathOf(filePath);
    if (files.has(file)) return;
    try {
      const text = readTextIfFile(filePath);
      if (text === undefined) return;
      const { attributes, body } = parseFrontmatter(text);
      const name = basename(filePath).slice(0, -3);
      const first = byName.get(name);
      if (first) return void warnings.push(`Prompt template "${name}" at ${filePath} is left out: the one at ${first.filePath} has that name and loaded first`);
      const description = attributes.description?.trim() || firstNonEmptyLine(body);
      const content = body.replace(/^(?:[ \t]*\r?\n)+/, "").trimEnd();
      byName.set(name, { name, description, content, filePath, location: source.location, found: foundFor(source, filePath) });
      files.add(file);
    } catch (err) {
      warnings.push(`Skipping prompt template ${filePath}: ${errorMessage(err)}`);
    }
  };
  const addFolder = (dir: string, source: ResourceSource) => {
    let entries: string[];
    try {
      entries = listDir(dir).filter((e) => e.endsWith(".md") && e.length > 3 && !e.startsWith("."));
    } catch (err) {
      warnings.push(`Cannot read prompts folder ${dir}: ${errorMessage(err)}`);
      return;
    }
    for (const entry of entries) addFile(resolve(dir, entry), source);
  };
  for (const source of resourceSources("prompts", roots, explicit)) {
    const kind = pathKind(source.path);
    if (source.as === "folder") {
      if (kind === "folder") addFolder(source.path, source);
    } else if (kind === "folder") addFolder(source.path, source);
    else if (kind === "file" && source.path.endsWith(".md")) addFile(source.path, source);
    else warnings.push(kind === "file" ? `Skipping prompt template ${source.path}: not a .md file` : `Prompt template path not found: ${source.path}`);
  }
  return { templates: [...byName.values()], warnings };
}

const firstNonEmptyLine = (body: string): string => body.split("\n").find((l) => l.trim() !== "")?.trim() ?? "";

/**
 * Split arguments the way a shell user expects: whitespace separates, and a `"` or `'` that starts an
 * argument quotes it up to the matching quote (a backslash before that quote keeps it as text).
 * Quotes inside a word (`doesn't`) and a quote that is never closed stay as typed.
 */
export function splitArgs(input: string): string[] {
  const args: string[] = [];
  let i = 0;
  while (i < input.length) {
    while (i < input.length && /\s/.test(input[i])) i++;
    if (i >= input.length) break;
    let arg = "";
    const quote = input[i];
    if (quote === '"' || quote === "'") {
      const quoted = readQuoted(input, i);
      if (quoted) {
        arg = quoted.value;
        i = quoted.end;
      }
    }
    while (i < input.length && !/\s/.test(input[i])) arg += input[i++];
    args.push(arg);
  }
  return args;
}

function readQuoted(input: string, start: number): { value: string; end: number } | undefined {
  const quote = input[start];
  let value = "";
  for (let j = start + 1; j < input.length; j++) {
    if (input[j] === "\\" && input[j + 1] === quote) {
      value += quote;
      j++;
    } else if (input[j] === quote) {
      return { value, end: j + 1 };
    } else {
      value += input[j];
    }
  }
  return undefined;
}

const PLACEHOLDER = /\$\{@:(\d+)(?::(\d+))?\}|\$\{([1-9]\d*|@)(?::-([^}]*))?\}|\$ARGUMENTS|\$@|\$([1-9]\d*)/g;

/**
 * Fill a template in one pass, so argument text is never substituted again:
 * `$1`…, `$@` and `$ARGUMENTS` (all, space-joined), `${1:-default}`, `${@:-default}`,
 * `${@:N}` (from the N-th on) and `${@:N:L}` (L of them from the N-th). Missing positions are empty.
 */
export function substituteArgs(content: string, args: readonly string[]): string {
  const all = args.join(" ");
  return content.replace(
    PLACEHOLDER,
    (whole, from?: string, count?: string, braced?: string, fallback?: string, position?: string) => {
      if (from !== undefined) {
        const start = Math.max(Number(from), 1) - 1;
        return args.slice(start, count === undefined ? undefined : start + Number(count)).join(" ");
      }
      if (braced !== undefined) {
        const value = braced === "@" ? all : (args[Number(braced) - 1] ?? "");
        return value === "" ? (fallback ?? "") : value;
      }
      if (position !== undefined) return args[Number(position) - 1] ?? "";
      return whole === "$ARGUMENTS" || whole === "$@" ? all : whole;
    },
  );
}

/** `/name args…` for a known template becomes its filled-in text; anything else is returned unchanged. */
export function expandPromptTemplate(text: string, templates: readonly PromptTemplate[]): string {
  const m = /^\/([^\s/]+)(?:\s+([\s\S]*))?$/.exec(text);
  const template = m ? templates.find((t) => t.name === m[1]) : undefined;
  if (!m || !template) return text;
  return substituteArgs(template.content, splitArgs(m[2] ?? ""));
}
