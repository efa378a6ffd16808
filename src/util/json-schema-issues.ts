/**
 * The validator's output (json-schema-engine.ts) worded as pion reports it: one issue per failing
 * keyword, at the value it concerns. Loaded with the validator, only when a check fails.
 */
import { pointerParts } from "./json-pointer.ts";
import { WRAPPERS, type OutputUnit, type SchemaIssue } from "./json-schema.ts";

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * The validator's output as one issue per failing keyword, at the value it concerns: a missing
 * or unknown property is reported at that property, wrapper records ("property x does not
 * match") are left out, and the common keywords are worded from the schema and the value.
 */
export function issuesOf(root: Record<string, unknown>, value: unknown, errors: OutputUnit[]): SchemaIssue[] {
  const issues: SchemaIssue[] = [];
  const named = (e: OutputUnit) => /"((?:[^"\\]|\\.)*)"/.exec(e.error)?.[1] ?? "";
  const unknown = new Set<string>();
  const blamed = errors.filter((e) => e.keyword === "anyOf" || e.keyword === "oneOf").map((e) => blame(root, value, e, errors));
  // A value of the wrong type is reported for that alone, not for the node's other keywords.
  const mistyped = errors.filter((e) => e.keyword === "type").map((e) => ({ node: e.keywordLocation.slice(0, -"type".length), at: e.instanceLocation }));
  const besideType = (e: OutputUnit) =>
    e.keyword !== "type" && mistyped.some((t) => e.keywordLocation.startsWith(t.node) && (e.instanceLocation === t.at || e.instanceLocation.startsWith(`${t.at}/`)));
  const otherBranch = (e: OutputUnit) => blamed.some((u) => e.keywordLocation.startsWith(u.prefix) && (u.keep === undefined || !e.keywordLocation.startsWith(u.keep)));
  for (const e of errors) {
    // The boolean-schema record that follows an unknown property names it again: one issue is enough.
    if (e.keyword === "additionalProperties" || e.keyword === "unevaluatedProperties") unknown.add(`${e.instanceLocation}/${named(e)}`);
    if (e.keyword === "oneOf" && !errors.some((x) => x.keywordLocation.startsWith(`${e.keywordLocation}/`))) {
      issues.push({ path: pointerParts(e.instanceLocation), message: "matches more than one alternative" });
    }
    const tagIssue = blamed.find((u) => u.record === e)?.issue;
    if (tagIssue) issues.push(tagIssue);
    if (e.keyword === "anyOf" || e.keyword === "oneOf" || otherBranch(e) || besideType(e)) continue;
    const path = pointerParts(e.instanceLocation);
    const node = at(root, pointerParts(e.keywordLocation).slice(0, -1));
    switch (e.keyword) {
      case "required":
        issues.push({ path: [...path, named(e)], message: "missing" });
        break;
      case "additionalProperties":
      case "unevaluatedProperties":
        if (node?.[e.keyword] === false) issues.push({ path: [...path, named(e)], message: "unknown field" });
        break;
      case "false":
        if (!unknown.has(e.instanceLocation)) issues.push({ path, message: "no value is allowed here" });
        break;
      case "type": {
        const types = node && (Array.isArray(node.type) ? node.type : [node.type]);
        const got = valueAt(value, path);
        issues.push({ path, message: types ? `expected ${types.join(" or ")}, got ${typeName(got)}` : e.error });
        break;
      }
      default: {
        const word = WORDS[e.keyword];
        if (!WRAPPERS.has(e.keyword)) issues.push({ path, message: (node && word?.(node[e.keyword])) || e.error });
      }
    }
  }
  return issues;
}

/** A failed keyword in a few words, from its value in the schema. */
const WORDS: Record<string, (k: unknown) => string> = {
  enum: (k) => `expected one of ${JSON.stringify(k)}`,
  const: (k) => `expected ${JSON.stringify(k)}`,
  minimum: (k) => `expected >= ${k}`,
  maximum: (k) => `expected <= ${k}`,
  exclusiveMinimum: (k) => `expected > ${k}`,
  exclusiveMaximum: (k) => `expected < ${k}`,
  multipleOf: (k) => `expected a multiple of ${k}`,
  minLength: (k) => `expected at least ${k} characters`,
  maxLength: (k) => `expected at most ${k} characters`,
  minItems: (k) => `expected at least ${k} items`,
  maxItems: (k) => `expected at most ${k} items`,
  minProperties: (k) => `expected at least ${k} properties`,
  maxProperties: (k) => `expected at most ${k} properties`,
  uniqueItems: () => "expected unique items",
  not: () => "must not match the schema in not",
  pattern: (k) => `expected to match ${k}`,
  format: (k) => `expected format ${k}`,
};


interface Blame {
  record: OutputUnit;
  /** The union's branch records start with this. */
  prefix: string;
  /** The one branch whose records are kept; none when the issue below replaces them all. */
  keep?: string;
  issue?: SchemaIssue;
}

/**
 * A failed union is blamed on one branch, the one the value was most likely meant for: in a
 * tagged union (each branch an object with a distinct `const` property) the branch its tag
 * names, or the tag itself when it names none; else the branch declaring most of an object's
 * properties, then the one whose first problem lies deepest, then the first.
 */
function blame(root: Record<string, unknown>, value: unknown, record: OutputUnit, errors: OutputUnit[]): Blame {
  const prefix = `${record.keywordLocation}/`;
  const list: unknown[] = at(root, pointerParts(record.keywordLocation)) ?? [];
  const branches = list.map((b) => (isObject(b) && typeof b.$ref === "string" ? at(root, pointerParts(b.$ref)) : b));
  const here = valueAt(value, pointerParts(record.instanceLocation));
  const tag = tagOf(branches);
  if (tag && isObject(here)) {
    const i = tag.values.indexOf(here[tag.key]);
    if (i >= 0) return { record, prefix, keep: `${prefix}${i}/` };
    return { record, prefix, issue: { path: [...pointerParts(record.instanceLocation), tag.key], message: `expected one of ${JSON.stringify(tag.values)}` } };
  }
  let best: { i: number; declared: number; depth: number } | undefined;
  branches.forEach((b, i) => {
    const first = errors.find((e) => e.keywordLocation.startsWith(`${prefix}${i}/`) && !WRAPPERS.has(e.keyword));
    if (!first) return;
    const depth = pointerParts(first.instanceLocation).length + (first.keyword === "required" || first.keyword === "additionalProperties" ? 1 : 0);
    const props = isObject(b) && isObject(b.properties) ? b.properties : {};
    const declared = isObject(here) ? Object.keys(here).filter((k) => Object.hasOwn(props, k)).length : 0;
    if (!best || declared > best.declared || (declared === best.declared && depth > best.depth)) best = { i, declared, depth };
  });
  return { record, prefix, keep: `${prefix}${best?.i ?? 0}/` };
}

/** The property every branch fixes to a distinct primitive `const`, with those values in branch order. */
function tagOf(branches: unknown[]): { key: string; values: unknown[] } | undefined {
  const first = branches[0];
  if (!isObject(first) || !isObject(first.properties)) return undefined;
  for (const key of Object.keys(first.properties)) {
    const values = branches.map((b) => {
      const p = isObject(b) && isObject(b.properties) ? b.properties[key] : undefined;
      return isObject(p) ? p.const : undefined;
    });
    if (values.every((x) => x !== undefined && (typeof x !== "object" || x === null)) && new Set(values).size === values.length) return { key, values };
  }
  return undefined;
}

/** The schema at a keyword location, through the local `$ref`s the location passes. */
function at(root: unknown, parts: string[]): any {
  let node = root;
  for (const p of parts) {
    const next: unknown = Array.isArray(node) ? node[Number(p)] : isObject(node) ? node[p] : undefined;
    node = p === "$ref" && typeof next === "string" ? at(root, pointerParts(next)) : next;
  }
  return node;
}

const valueAt = (value: unknown, parts: string[]): unknown =>
  parts.reduce<unknown>((v, p) => (Array.isArray(v) ? v[Number(p)] : isObject(v) ? v[p] : undefined), value);

function typeName(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number" && Number.isInteger(v)) return "integer";
  return typeof v;
}

