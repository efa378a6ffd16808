import { basename, dirname, join, resolve } from "node:path";
import { autoFound, CLI_FOUND, listedFound, type FoundBy } from "./source-info.ts";
import { errorMessage } from "../util/errors.ts";
import { listDir, pathKind, readTextIfFile, userDirsOf, type ExplicitResources, type ResourceLocation, type ResourceScope } from "./files.ts";
import { parseFrontmatter } from "./frontmatter.ts";
import { projectPaths } from "./project-paths.ts";

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
  /** Sorted by name; one per name, the project's winning over the user's. */
  templates: PromptTemplate[];
  /** One line per skipped file, for the caller to print on stderr. */
  warnings: string[];
}

/** Template folders in precedence order (a later one replaces an earlier template of the same name); the project's only when trusted. */
export function promptTemplateSources(scope: ResourceScope): { dir: string; location: ResourceLocation; found: FoundBy }[] {
  const user = userDirsOf(scope).map((home) => ({ dir: join(home, "prompts"), location: "user" as const, found: autoFound("user", home) }));
  if (!scope.project) return user;
  return [...user, ...projectPaths(scope.cwd).prompts.map((dir) => ({ dir, location: "project" as const, found: autoFound("project", dirname(dir)) }))];
}

/**
 * Read the direct `.md` children of each template folder, then each explicit path
 * (`--prompt-template`: a `.md` file or a folder of them), which wins over a discovered
 * template of the same name. `noDiscovery` (`--no-prompt-templates`) skips the folders.
 * Unreadable files are skipped with a warning.
 */
export function loadPromptTemplates(roots: ResourceScope, explicit: ExplicitResources = {}): LoadedPromptTemplates {
  const byName = new Map<string, PromptTemplate>();
  const warnings: string[] = [];
  const addFile = (filePath: string, location: ResourceLocation, found: FoundBy) => {
    if (location !== "path" && explicit.listed?.enabled(filePath) === false) return;
    try {
      const text = readTextIfFile(filePath);
      if (text === undefined) return;
      const { attributes, body } = parseFrontmatter(text);
      const name = basename(filePath).slice(0, -3);
      const description = attributes.description?.trim() || firstNonEmptyLine(body);
      const content = body.replace(/^(?:[ \t]*\r?\n)+/, "").trimEnd();
      byName.set(name, { name, description, content, filePath, location, found });
    } catch (err) {
      warnings.push(`Skipping prompt template ${filePath}: ${errorMessage(err)}`);
    }
  };
  const addFolder = (dir: string, location: ResourceLocation, found: FoundBy) => {
    let entries: string[];
    try {
      entries = listDir(dir).filter((e) => e.endsWith(".md") && e.length > 3 && !e.startsWith("."));
    } catch (err) {
      warnings.push(`Cannot read prompts folder ${dir}: ${errorMessage(err)}`);
      return;
    }
    for (const entry of entries) addFile(resolve(dir, entry), location, found);
  };
  if (!explicit.noDiscovery) for (const { dir, location, found } of promptTemplateSources(roots)) addFolder(dir, location, found);
  const addPath = (path: string, location: ResourceLocation, found: FoundBy) => {
    const kind = pathKind(path);
    if (kind === "folder") addFolder(path, location, found);
    else if (kind === "file" && path.endsWith(".md")) addFile(path, location, found);
    else warnings.push(kind === "file" ? `Skipping prompt template ${path}: not a .md file` : `Prompt template path not found: ${path}`);
  };
  // The settings' paths count as configured (their overrides apply); the command line's always load.
  for (const { path, location, package: pkg } of explicit.listed?.paths ?? []) addPath(path, location, listedFound(location, pkg));
  for (const { path, found } of explicit.fromPackages ?? []) addPath(path, "path", found);
  for (const raw of explicit.paths ?? []) addPath(resolve(roots.cwd, raw), "path", CLI_FOUND);
  const templates = [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { templates, warnings };
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
