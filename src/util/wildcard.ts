/** `*` wildcards (any run of characters) over whole names; a pattern without `*` is an exact name. */
export function wildcardMatch(pattern: string, name: string): boolean {
  if (!pattern.includes("*")) return pattern === name;
  const body = pattern
    .split("*")
    .map((s) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*");
  return new RegExp(`^${body}$`).test(name);
}
