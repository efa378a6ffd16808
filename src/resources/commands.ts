import type { ResourceLocation } from "./files.ts";
import type { PromptTemplate } from "./prompt-templates.ts";
import type { Skill } from "./skills.ts";
import { sourceInfoAt, type FoundBy, type SourceInfo } from "./source-info.ts";

/** One `get_commands` entry; `location` and `path` are the older spec's fields, kept beside `sourceInfo`. */
export interface CommandInfo {
  name: string;
  description: string;
  source: "prompt" | "skill";
  location: ResourceLocation;
  path: string;
  sourceInfo: SourceInfo;
}

/** Prompt templates (`/name`) then skills (`/skill:name`), each group in the order given. */
export function listCommands(skills: readonly Skill[], templates: readonly PromptTemplate[]): CommandInfo[] {
  return [
    ...templates.map((t) => entry(t.name, t.description, "prompt", t.location, t.filePath, t.found)),
    ...skills.map((s) => entry(`skill:${s.name}`, s.description, "skill", s.location, s.filePath, s.found)),
  ];
}

function entry(
  name: string,
  description: string,
  source: CommandInfo["source"],
  location: ResourceLocation,
  path: string,
  found: FoundBy,
): CommandInfo {
  return {
    name,
    description,
    source,
    location,
    path,
    sourceInfo: sourceInfoAt(path, found),
  };
}
