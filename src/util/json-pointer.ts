/** A JSON Pointer's parts ("#/a~1b/0" -> ["a/b", "0"]); the whole value has none. */
export function pointerParts(pointer: string): string[] {
  const parts = pointer.replace(/^#\/?/, "");
  return parts ? parts.split("/").map((p) => decodeURIComponent(p).replace(/~1/g, "/").replace(/~0/g, "~")) : [];
}
