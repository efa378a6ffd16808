import { isAbsolute, resolve } from "node:path";
import { joinToolPath } from "../tools/path.ts";
import { resolveThroughLinks } from "../tools/real-path.ts";
import { errorMessage } from "../util/errors.ts";
import type { PathSubject, Subject, WriteSubject } from "./rules.ts";
import { analyseBash, type ShellAnalysis } from "./shell/analyse.ts";
import { loadBashParser } from "./shell/parser.ts";

const DEFAULT_PATH_TOOLS: ReadonlySet<string> = new Set(["grep", "find", "ls"]);
/** More folders than this that `cd` may have moved to, and a relative write's folder counts as unknown. */
const MAX_BASES = 16;

/**
 * What the rules look at for a call: a bash line's analysis (its parser is loaded on the
 * first line judged), else a `path` argument (grep, find and ls default to the cwd).
 */
export async function subjectOf(toolName: string, args: Record<string, unknown>, cwd: string): Promise<Subject | undefined> {
  if (toolName === "bash" && typeof args.command === "string") {
    const analysis = await analyse(args.command);
    return { kind: "command", command: args.command, analysis, writes: writeSubjects(analysis, cwd) };
  }
  const path = typeof args.path === "string" ? args.path : DEFAULT_PATH_TOOLS.has(toolName) ? "." : undefined;
  if (path === undefined) return undefined;
  return pathSubject(joinToolPath(path, cwd));
}

async function analyse(command: string): Promise<ShellAnalysis> {
  try {
    return analyseBash(await loadBashParser(), command);
  } catch (err) {
    return { commands: [], writes: [], cdTargets: [], unanalysable: `the shell parser did not load (${errorMessage(err)})` };
  }
}

/** An absolute path (`..` not taken out yet) as given, normalized, and as the kernel resolves it. */
export function pathSubject(abs: string): PathSubject {
  const given = resolve(abs);
  const real = resolveThroughLinks(abs);
  if (real === undefined) return { kind: "path", paths: [given], unresolved: true };
  return { kind: "path", paths: real !== given ? [given, real] : [given] };
}

/** Each file the line writes, resolved from every folder a `cd` before it may have moved to. */
function writeSubjects(analysis: ShellAnalysis, cwd: string): WriteSubject[] {
  let bases: string[] | undefined = [cwd];
  for (const target of analysis.cdTargets) {
    if (target === undefined || bases === undefined) {
      bases = undefined;
      continue;
    }
    const moved: string[] = bases.map((b) => (isAbsolute(target) ? target : `${b}/${target}`));
    bases = [...new Set([...bases, ...moved, isAbsolute(target) ? target : `${cwd}/${target}`])];
    if (bases.length > MAX_BASES) bases = undefined;
  }
  return analysis.writes.map((w): WriteSubject => {
    if (w.path === undefined) return { kind: "unknown", source: w.source };
    if (isAbsolute(w.path)) return pathSubject(w.path);
    if (!bases) return { kind: "unknown", source: w.source };
    const spellings = bases.map((b) => pathSubject(`${b}/${w.path}`));
    return { kind: "path", paths: [...new Set(spellings.flatMap((s) => s.paths))], ...(spellings.some((s) => s.unresolved) ? { unresolved: true } : {}) };
  });
}
