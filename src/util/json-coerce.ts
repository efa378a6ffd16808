/**
 * Loose tool arguments brought towards their JSON Schema before they are checked, as the
 * reference agent does for every tool call: models send `"42"` for a number, one value for an
 * array, `null` for an optional property they mean to leave out. The rules are TypeBox's
 * `Value.Convert` (1.3.27, the version pion bundles) read off JSON Schema keywords instead of
 * TypeBox's kind marks, wrapped between two further steps:
 *
 * 1. a `null` in an optional property whose schema refuses null is removed;
 * 2. conversion by the node's first keyword among `$ref`, `const`, `enum`, `anyOf`/`oneOf`,
 *    `allOf`, `type` (or `properties` / `items` without a type);
 * 3. plain primitive coercion by `type` (type arrays too) for what step 2 left.
 *
 * Nothing is modified: a container is copied only when one of its members changes, so an
 * unchanged value comes back as itself. What no rule turns into a valid value stays as it was,
 * and the check that follows reports it. `passes` is the caller's validator for a sub-schema.
 */
import { pointerParts } from "./json-pointer.ts";

type Rec = Record<string, unknown>;
export type SubschemaCheck = (schema: unknown, value: unknown) => boolean;

const isRec = (v: unknown): v is Rec => typeof v === "object" && v !== null && !Array.isArray(v);
const finite = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);
/** A conversion's outcome: the new value, or undefined when the value does not convert. */
type Got = { v: unknown } | undefined;
const or = (got: Got, value: unknown): unknown => (got ? got.v : value);

/** How deep `$ref`s and one-value wraps may nest before a value is left as it is (a recursive schema). */
const MAX_DEPTH = 64;

export function coerceToSchema(root: unknown, value: unknown, passes: SubschemaCheck): unknown {
  const c = new Coercion(root, passes);
  return c.primitives(c.convert(root, c.dropNulls(value, root), 0), root);
}

class Coercion {
  constructor(
    private readonly root: unknown,
    private readonly passes: SubschemaCheck,
  ) {}

  private ok(node: unknown, value: unknown): boolean {
    try {
      return this.passes(node, value);
    } catch {
      return false;
    }
  }

  /** A local `$ref` ("#", "#/a/b") followed; undefined for anything else. */
  private target(ref: string): unknown {
    if (ref !== "#" && !ref.startsWith("#/")) return undefined;
    let node: unknown = this.root;
    for (const key of pointerParts(ref)) node = Array.isArray(node) ? node[Number(key)] : isRec(node) ? node[key] : undefined;
    return node;
  }

  // Step 1: optional nulls

  dropNulls(value: unknown, schema: unknown): unknown {
    if (!isRec(schema)) return value;
    if (Array.isArray(value)) return mapItems(value, (item, i) => this.dropNulls(item, itemSchema(schema, i)));
    if (!isRec(value)) return value;
    const required = new Set(Array.isArray(schema.required) ? schema.required : []);
    return mapMembers(value, schema, (key, member, declared, subs) => {
      const sub = subs[0];
      if (declared && member === null && !required.has(key) && !(isRec(sub) && typeof sub.$ref === "string") && !this.ok(sub, null)) return DROP;
      let next = member;
      for (const s of subs) next = this.dropNulls(next, s);
      return next;
    });
  }

  // Step 2: TypeBox's conversions

  convert(node: unknown, value: unknown, depth: number): unknown {
    if (!isRec(node)) return value;
    if (typeof node.$ref === "string") {
      const target = this.target(node.$ref);
      return isRec(target) && depth < MAX_DEPTH ? this.convert(target, value, depth + 1) : value;
    }
    if (Object.hasOwn(node, "const")) return literal(node.const, value);
    if (Array.isArray(node.enum)) {
      if (node.enum.some((m) => m === value)) return value;
      for (const m of node.enum) {
        const next = literal(m, value);
        if (next !== value && this.ok(node, next)) return next;
      }
      return value;
    }
    const union = Array.isArray(node.anyOf) ? node.anyOf : Array.isArray(node.oneOf) ? node.oneOf : undefined;
    if (union) {
      if (union.some((b) => this.ok(b, value))) return this.members(node, value, depth);
      for (const branch of union) {
        const next = this.members(node, this.convert(branch, value, depth), depth);
        if (this.ok(node, next)) return next;
      }
      return this.members(node, value, depth);
    }
    if (Array.isArray(node.allOf)) {
      let next = value;
      for (const part of node.allOf) next = this.convert(part, next, depth);
      return this.members(node, next, depth);
    }
    switch (node.type) {
      case "string":
        return or(toString(value), value);
      case "number":
        return or(toNumber(value), value);
      case "integer": {
        const got = toNumber(value);
        return got ? Math.trunc(got.v as number) : value;
      }
      case "boolean":
        return or(toBoolean(value), value);
      case "null":
        return or(toNull(value), value);
      case "bigint":
        return or(toBigInt(value), value);
      case "undefined":
        return or(toUndefined(value), value);
      case "array":
        return this.array(node, value, depth);
      case "object":
        return this.object(node, value, depth);
      case undefined:
        if (node.properties !== undefined || node.patternProperties !== undefined) return this.object(node, value, depth);
        if (node.items !== undefined || node.prefixItems !== undefined) return this.array(node, value, depth);
        return value;
      default:
        return value;
    }
  }

  /** A union or intersection node's own object members (plain JSON Schema may declare both). */
  private members(node: Rec, value: unknown, depth: number): unknown {
    const declares = node.properties !== undefined || node.patternProperties !== undefined || node.additionalProperties !== undefined;
    return declares ? this.object(node, value, depth) : value;
  }

  private array(node: Rec, value: unknown, depth: number): unknown {
    const tuple = Array.isArray(node.items) ? node.items : Array.isArray(node.prefixItems) ? node.prefixItems : undefined;
    if (tuple) {
      if (!Array.isArray(value)) return value; // a tuple never wraps
      const rest = Array.isArray(node.items) ? undefined : node.items;
      return mapItems(value, (item, i) => {
        const sub = i < tuple.length ? tuple[i] : rest;
        return sub === undefined ? item : this.convert(sub, item, depth);
      });
    }
    if (Array.isArray(value)) return node.items === undefined ? value : mapItems(value, (item) => this.convert(node.items, item, depth));
    return [isRec(node.items) && depth < MAX_DEPTH ? this.convert(node.items, value, depth + 1) : value];
  }

  private object(node: Rec, value: unknown, depth: number): unknown {
    if (!isRec(value)) return value;
    return mapMembers(value, node, (_key, member, _declared, subs) => {
      if (member === undefined) return member; // an undefined property counts as absent
      let next: unknown = member;
      for (const sub of subs) next = this.convert(sub, next, depth);
      return next;
    });
  }

  // Step 3: primitive coercion by type

  primitives(value: unknown, schema: unknown): unknown {
    if (!isRec(schema)) return value;
    let next = value;
    if (Array.isArray(schema.allOf)) for (const part of schema.allOf) next = this.primitives(next, part);
    for (const key of ["anyOf", "oneOf"] as const) {
      const branches = schema[key];
      if (!Array.isArray(branches) || branches.some((b) => this.ok(b, next))) continue;
      for (const branch of branches) {
        const candidate = this.primitives(next, branch);
        if (this.ok(branch, candidate)) {
          next = candidate;
          break;
        }
      }
    }
    const types = typeof schema.type === "string" ? [schema.type] : Array.isArray(schema.type) ? schema.type.filter((t): t is string => typeof t === "string") : [];
    if (types.length > 0 && !(types.length > 1 && types.some((t) => isType(next, t)))) {
      for (const t of types) {
        const candidate = primitive(next, t);
        if (candidate !== next) {
          next = candidate;
          break;
        }
      }
    }
    if (types.includes("object") && isRec(next)) {
      next = mapMembers(next, schema, (_key, member, _declared, subs) => {
        let out = member;
        for (const sub of subs) out = this.primitives(out, sub);
        return out;
      });
    }
    if (types.includes("array") && Array.isArray(next)) next = mapItems(next, (item, i) => this.primitives(item, itemSchema(schema, i)));
    return next;
  }
}

const DROP = Symbol("drop");

/** `value` without its undefined object members, at any depth; itself when it has none. */
export function withoutUndefined(value: unknown): unknown {
  if (Array.isArray(value)) return mapItems(value, withoutUndefined);
  if (!isRec(value)) return value;
  let out: Rec | undefined;
  for (const [key, member] of Object.entries(value)) {
    const next = member === undefined ? DROP : withoutUndefined(member);
    if (next === member) continue;
    out ??= { ...value };
    if (next === DROP) delete out[key];
    else out[key] = next;
  }
  return out ?? value;
}

/**
 * `value`'s members mapped with the sub-schemas that apply to each (its `properties` entry,
 * every matching `patternProperties` entry, else `additionalProperties`); copied on the first change.
 * `declared` says the first of them is the key's `properties` entry.
 */
function mapMembers(value: Rec, schema: Rec, map: (key: string, member: unknown, declared: boolean, subs: unknown[]) => unknown): Rec {
  const props = isRec(schema.properties) ? schema.properties : {};
  const patterns = isRec(schema.patternProperties) ? Object.entries(schema.patternProperties).map(([p, s]) => [new RegExp(p, "u"), s] as const) : [];
  const additional = isRec(schema.additionalProperties) ? schema.additionalProperties : undefined;
  let out: Rec | undefined;
  for (const key of Object.keys(value)) {
    const declared = Object.hasOwn(props, key);
    const subs: unknown[] = declared ? [props[key]] : [];
    for (const [re, s] of patterns) if (re.test(key)) subs.push(s);
    if (subs.length === 0 && additional !== undefined) subs.push(additional);
    if (subs.length === 0) continue;
    const next = map(key, value[key], declared, subs);
    if (next === DROP) {
      out ??= { ...value };
      delete out[key];
    } else if (next !== value[key]) {
      out ??= { ...value };
      out[key] = next;
    }
  }
  return out ?? value;
}

function mapItems(items: unknown[], map: (item: unknown, i: number) => unknown): unknown[] {
  let out: unknown[] | undefined;
  items.forEach((item, i) => {
    const next = map(item, i);
    if (next === item) return;
    out ??= items.slice();
    out[i] = next;
  });
  return out ?? items;
}

/** The schema of the item at `i`: a tuple's entry for its prefix, else `items`. */
function itemSchema(schema: Rec, i: number): unknown {
  if (Array.isArray(schema.items)) return schema.items[i];
  if (Array.isArray(schema.prefixItems) && i < schema.prefixItems.length) return schema.prefixItems[i];
  return schema.items;
}

/** A `const` or enum member reached from a value of another type that converts to exactly it. */
function literal(target: unknown, value: unknown): unknown {
  if (target === value) return value;
  const convert = { string: toString, number: toNumber, boolean: toBoolean, bigint: toBigInt }[typeof target as string];
  const got = convert?.(value);
  return got && got.v === target ? got.v : value;
}

function toString(v: unknown): Got {
  if (typeof v === "bigint" || typeof v === "boolean" || finite(v)) return { v: String(v) };
  if (v === null) return { v: "null" };
  if (typeof v === "string") return { v };
  return v === undefined ? { v: "" } : undefined;
}

const SAFE_MAX = BigInt(Number.MAX_SAFE_INTEGER);
const SAFE_MIN = BigInt(Number.MIN_SAFE_INTEGER);
const safe = (b: bigint | undefined): Got => (b !== undefined && b <= SAFE_MAX && b >= SAFE_MIN ? { v: Number(b) } : undefined);

function toNumber(v: unknown): Got {
  if (typeof v === "bigint") return safe(v);
  if (typeof v === "boolean") return { v: v ? 1 : 0 };
  if (finite(v)) return { v };
  if (v === null || v === undefined) return { v: 0 };
  if (typeof v !== "string") return undefined;
  const n = +v;
  if (Number.isFinite(n)) return { v: n };
  const lower = v.toLowerCase();
  if (lower === "true" || lower === "false") return { v: lower === "true" ? 1 : 0 };
  return safe(bigintText(v));
}

/** "12n", "12.9" (cut to 12) or "12" as a bigint. */
function bigintText(v: string): bigint | undefined {
  const m = /^(-?(?:0|[1-9]\d*))(n|\.\d+)?$/.exec(v);
  return m ? BigInt(m[1] as string) : undefined;
}

function toBigInt(v: unknown): Got {
  if (typeof v === "bigint") return { v };
  if (typeof v === "boolean") return { v: v ? 1n : 0n };
  if (finite(v)) return { v: BigInt(Math.trunc(v)) };
  if (v === null || v === undefined) return { v: 0n };
  if (typeof v !== "string") return undefined;
  const b = bigintText(v);
  if (b !== undefined) return { v: b };
  const lower = v.toLowerCase();
  return lower === "true" ? { v: 1n } : lower === "false" ? { v: 0n } : undefined;
}

function toBoolean(v: unknown): Got {
  if (typeof v === "bigint") return v === 0n || v === 1n ? { v: v === 1n } : undefined;
  if (typeof v === "boolean") return { v };
  if (finite(v)) return v === 0 || v === 1 ? { v: v === 1 } : undefined;
  if (v === null || v === undefined) return { v: false };
  if (typeof v !== "string") return undefined;
  const lower = v.toLowerCase();
  if (lower === "true" || v === "1") return { v: true };
  return lower === "false" || v === "0" ? { v: false } : undefined;
}

/** The values TypeBox reads as "nothing": used for both null and undefined targets. */
function nothing(v: unknown, extra: boolean): boolean {
  if (v === null || v === undefined || v === false || v === 0 || (extra && v === 0n)) return true;
  if (typeof v !== "string") return false;
  const lower = v.toLowerCase();
  return lower === "undefined" || lower === "null" || v === "" || v === "0";
}

const toNull = (v: unknown): Got => (v === 0n || nothing(v, false) ? { v: null } : undefined);
const toUndefined = (v: unknown): Got => (nothing(v, true) ? { v: undefined } : undefined);

function isType(v: unknown, type: string): boolean {
  switch (type) {
    case "number":
      return finite(v);
    case "integer":
      return Number.isInteger(v);
    case "null":
      return v === null;
    case "undefined":
      return v === undefined;
    case "array":
      return Array.isArray(v);
    case "object":
      return isRec(v);
    case "string":
    case "boolean":
    case "bigint":
      return typeof v === type;
    default:
      return false;
  }
}

/** Ajv-style coercion of one primitive towards `type`; the value itself when it does not apply. */
function primitive(v: unknown, type: string): unknown {
  switch (type) {
    case "number":
    case "integer": {
      if (v === null) return 0;
      if (typeof v === "boolean") return v ? 1 : 0;
      if (typeof v === "string" && v.trim() !== "") {
        const n = Number(v);
        if (type === "number" ? Number.isFinite(n) : Number.isInteger(n)) return n;
      }
      return v;
    }
    case "boolean":
      if (v === null || v === "false" || v === 0) return false;
      return v === "true" || v === 1 ? true : v;
    case "string":
      if (v === null) return "";
      return typeof v === "number" || typeof v === "boolean" ? String(v) : v;
    case "null":
      return v === "" || v === 0 || v === false ? null : v;
    default:
      return v;
  }
}
