import type { ResourceLocation } from "./files.ts";
import type { PromptTemplate } from "./prompt-templates.ts";
import type { Skill } from "./skills.ts";

/** Where a command's resource came from, in the reference's `sourceInfo` shape. */
export interface CommandSourceInfo {
  path: string;
  /** How it was discovered: pion only finds resources in its conventional folders. */
  source: "local";
  /** `temporary` for a resource named on the command line, as the reference says of extensions loaded with -e. */
  scope: "user" | "project" | "temporary";
  origin: "top-level";
}

/** One `get_commands` entry; `location` and `path` are the older spec's fields, kept beside `sourceInfo`. */
export interface CommandInfo {
  name: string;
  description: string;
  source: "prompt" | "skill";
  location: ResourceLocation;
  path: string;
  sourceInfo: CommandSourceInfo;
}

/** Prompt templates (`/name`) then skills (`/skill:name`), each group in the order given. */
export function listCommands(skills: readonly Skill[], templates: readonly PromptTemplate[]): CommandInfo[] {
  return [
    ...templates.map((t) => entry(t.name, t.description, "prompt", t.location, t.filePath)),
    ...skills.map((s) => entry(`skill:${s.name}`, s.description, "skill", s.location, s.filePath)),
  ];
}

function entry(
  name: string,
  description: string,
  source: CommandInfo["source"],
  location: ResourceLocation,
  path: string,
): CommandInfo {
  return {
    name,
    description,
    source,
    location,
    path,
    sourceInfo: { path, source: "local", scope: location === "path" ? "temporary" : location, origin: "top-level" },
  };
}
