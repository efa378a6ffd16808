/**
 * A tool as a TypeScript declaration for scripts (`describeTool()`): its arguments' JSON Schema
 * written as a type, each property's description as a comment. Covers what tool schemas use
 * (objects, arrays, enums, unions, primitives); anything else is `unknown`.
 */
type Schema = Record<string, unknown>;

const isObj = (v: unknown): v is Schema => !!v && typeof v === "object" && !Array.isArray(v);
const key = (k: string) => (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(k) ? k : JSON.stringify(k));

export function schemaType(s: unknown, indent = "", depth = 0): string {
  if (!isObj(s) || depth > 8) return "unknown";
  if (Array.isArray(s.enum)) return s.enum.map((v) => JSON.stringify(v)).join(" | ") || "never";
  if ("const" in s) return JSON.stringify(s.const);
  for (const k of ["anyOf", "oneOf"] as const) if (Array.isArray(s[k])) return (s[k] as unknown[]).map((x) => schemaType(x, indent, depth + 1)).join(" | ");
  const t = s.type;
  if (Array.isArray(t)) return t.map((x) => schemaType({ ...s, type: x }, indent, depth + 1)).join(" | ");
  if (t === "string") return "string";
  if (t === "number" || t === "integer") return "number";
  if (t === "boolean") return "boolean";
  if (t === "null") return "null";
  if (t === "array") return `${wrap(schemaType(s.items, indent, depth + 1))}[]`;
  if (t === "object" || isObj(s.properties)) {
    const props = isObj(s.properties) ? s.properties : {};
    const required = new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
    const inner = `${indent}  `;
    const lines = Object.entries(props).map(([k, v]) => {
      const doc = isObj(v) && typeof v.description === "string" ? `${inner}/** ${v.description.replace(/\*\//g, "* /").replace(/\s*\n\s*/g, " ")} */\n` : "";
      return `${doc}${inner}${key(k)}${required.has(k) ? "" : "?"}: ${schemaType(v, inner, depth + 1)};`;
    });
    if (lines.length === 0) return isObj(s.additionalProperties) ? `Record<string, ${schemaType(s.additionalProperties, indent, depth + 1)}>` : "Record<string, unknown>";
    return `{\n${lines.join("\n")}\n${indent}}`;
  }
  return "unknown";
}

const wrap = (t: string) => (t.includes("|") || t.includes("\n") ? `(${t})` : t);

/** `declare function tools.<id>(args: {...}): Promise<Result>;` with the tool's description above it. */
export function toolDeclaration(id: string, description: string, parameters: unknown, result: string): string {
  const doc = description.trim() ? `/**\n${description.trim().split("\n").map((l) => ` * ${l.replace(/\*\//g, "* /")}`).join("\n")}\n */\n` : "";
  return `${doc}declare function ${id}(args: ${schemaType(parameters)}): Promise<${result}>;`;
}
