/**
 * pi-ai's `StreamingJsonParser`: JSON text read piece by piece, each character once, whose
 * `snapshot()` is the value read so far and whose `append()` says what the piece changed.
 *
 * What an unfinished document shows: a string its characters so far (an escape cut in half is
 * held back); a container its members so far; a member whose key or value has not begun, nothing;
 * a literal cut short, its value once the text is a prefix of `true`, `false` or `null`; a number
 * cut short, its value when the digits so far are a number (an exponent without digits left off).
 * Malformed text is read leniently: raw control characters stay, an invalid escape stays as text,
 * missing commas and colons are tolerated, values where none can go and unknown words are dropped,
 * and whatever follows the root value is ignored. Nothing throws.
 *
 * Snapshots are plain values that never change: each new one copies the containers still open and
 * shares everything finished. Changes: `set` when a key, an element or a finished value appears
 * (a string once, with its first text; a container empty), `append` when a piece extends an open
 * string; numbers and literals when they end. Inside containers nested deeper than 32 levels,
 * nothing is reported until the deep one closes, then as one `set` of its whole value.
 *
 * Cost: copying the open containers costs their member count. Each piece earns credit (a constant
 * plus a multiple of its length) that snapshots spend; while a copy costs more than the credit,
 * `snapshot()` returns the previous one. A huge open container thus shows a preview that lags a
 * little, and the total work stays linear in the text.
 */
import { parseToolCallArguments } from "./ai-utils-json.ts";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Path = readonly (string | number)[];
export type JsonChange = { kind: "set"; path: Path; value: Json } | { kind: "append"; path: Path; text: string };

/** Where a value goes: the root, an array index, or an object key (in the innermost open container). */
type Slot = { at: "root" } | { at: "element"; index: number } | { at: "member"; key: string };

interface Frame {
  container: Json[] | { [key: string]: Json };
  /** Its place in the container around it; undefined for a container where no value can go. */
  slot: Slot | undefined;
  /** Its reported path; undefined when its changes are not reported. */
  path: Path | undefined;
  reportsInside: boolean;
  /** Members or elements so far: what copying it costs. */
  size: number;
  key: string | undefined;
  /** What the container expects next; arrays are always at "value". */
  expects: "key" | "colon" | "value" | "comma";
}

interface OpenString {
  isKey: boolean;
  slot: Slot | undefined;
  path: Path | undefined;
  text: string;
  /** An escape read in part: "", "\\", or "\\u" and up to three hex digits. */
  escape: string;
  /** This string's latest change, extended while no other change follows it. */
  change: JsonChange | undefined;
}

const MAX_REPORTED_DEPTH = 32;
const CREDIT_PER_PIECE = 256;
const CREDIT_PER_CHARACTER = 8;
/** A longer unfinished number is not shown until it ends, so a snapshot stays cheap. */
const MAX_PENDING_TOKEN = 64;
const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const MANTISSA_ONLY = /^(-?(?:0|[1-9]\d*)(?:\.\d+)?)[eE][+-]?$/;
const WORDS: [string, Json][] = [
  ["true", true],
  ["false", false],
  ["null", null],
];
const ESCAPED: Record<string, string> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };
const ENDS_TOKEN = new Set([" ", "\t", "\n", "\r", ",", ":", "{", "}", "[", "]", '"']);
const ROOT: Slot = { at: "root" };

export class StreamingJsonParser {
  #root: Json | undefined = undefined;
  #over = false;
  #frames: Frame[] = [];
  #string: OpenString | undefined = undefined;
  #token = "";
  #tokenSlot: Slot | undefined = undefined;
  /** Sum over the open containers of their size plus one. */
  #copyCost = 0;
  #credit = 0;
  #stale = false;
  #last: Json | undefined = undefined;
  #changes: JsonChange[] = [];

  /** Read the next piece; returns the changes it made, in order. Linear in its length. */
  append(text: string): readonly JsonChange[] {
    this.#credit += CREDIT_PER_PIECE + CREDIT_PER_CHARACTER * text.length;
    this.#changes = [];
    if (this.#string) this.#string.change = undefined;
    let i = 0;
    while (i < text.length && !this.#over) {
      if (this.#string) i = this.#readString(this.#string, text, i);
      else if (this.#token !== "") i = this.#readToken(text, i);
      else this.#readStructure(text[i++]!);
    }
    return this.#changes;
  }

  /** The value so far (undefined before one begins); the previous snapshot while nothing changed or a copy is not yet paid for. */
  snapshot(): Json | undefined {
    if (!this.#stale) return this.#last;
    const pending = this.#pendingToken();
    const cost = this.#copyCost + (pending ? 1 : 0);
    if (cost > this.#credit) return this.#last;
    this.#credit -= cost;
    this.#stale = false;
    this.#last = this.#copy(pending);
    return this.#last;
  }

  #readString(open: OpenString, text: string, from: number): number {
    let run = from;
    for (let i = from; i < text.length; i++) {
      const ch = text[i]!;
      if (open.escape !== "") {
        if (this.#escape(open, ch)) {
          run = i + 1;
          continue;
        }
        run = i; // not part of the escape: read as an ordinary character
      }
      if (ch === '"' || ch === "\\") {
        if (i > run) this.#extend(open, text.slice(run, i));
        run = i + 1;
        if (ch === '"') {
          this.#closeString(open);
          return i + 1;
        }
        open.escape = "\\";
      }
    }
    if (text.length > run) this.#extend(open, text.slice(run));
    return text.length;
  }

  /** Feed `ch` to the open escape; false when it does not belong to it (the escape then stays as text). */
  #escape(open: OpenString, ch: string): boolean {
    if (open.escape === "\\") {
      if (ch in ESCAPED) {
        open.escape = "";
        this.#extend(open, ESCAPED[ch]!);
        return true;
      }
      if (ch === "u") {
        open.escape = "\\u";
        return true;
      }
      open.escape = "";
      this.#extend(open, "\\");
      return false;
    }
    if (/[0-9a-fA-F]/.test(ch)) {
      open.escape += ch;
      if (open.escape.length < 6) return true;
      const code = Number.parseInt(open.escape.slice(2), 16);
      open.escape = "";
      this.#extend(open, String.fromCharCode(code));
      return true;
    }
    const literal = open.escape;
    open.escape = "";
    this.#extend(open, literal);
    return false;
  }

  #readToken(text: string, from: number): number {
    let end = from;
    while (end < text.length && !ENDS_TOKEN.has(text[end]!)) end++;
    if (end > from) {
      this.#token += text.slice(from, end);
      if (this.#tokenSlot) this.#stale = true;
    }
    if (end < text.length) this.#endToken();
    return end;
  }

  #readStructure(ch: string): void {
    const top = this.#frames.at(-1);
    switch (ch) {
      case " ":
      case "\t":
      case "\n":
      case "\r":
        return;
      case '"':
        return this.#openString(top);
      case "{":
        return this.#open({});
      case "[":
        return this.#open([]);
      case "}":
      case "]":
        return this.#close();
      case ":":
        if (top && !Array.isArray(top.container) && top.expects === "colon") top.expects = "value";
        return;
      case ",":
        if (top) top.expects = Array.isArray(top.container) ? "value" : "key";
        return;
      default:
        this.#token = ch;
        this.#tokenSlot = this.#nextSlot();
        if (this.#tokenSlot) this.#stale = true;
    }
  }

  /** Where a value beginning now goes; undefined where none can (it is then read and dropped). */
  #nextSlot(): Slot | undefined {
    const top = this.#frames.at(-1);
    if (!top) return this.#root === undefined ? ROOT : undefined;
    if (Array.isArray(top.container)) return { at: "element", index: top.container.length };
    // `{"a" 1}` reads as `{"a": 1}`: the colon may be missing.
    return (top.expects === "value" || top.expects === "colon") && top.key !== undefined ? { at: "member", key: top.key } : undefined;
  }

  #pathOf(slot: Slot | undefined): Path | undefined {
    if (!slot) return undefined;
    if (slot.at === "root") return [];
    const top = this.#frames.at(-1)!;
    if (!top.reportsInside) return undefined;
    return [...top.path!, slot.at === "member" ? slot.key : slot.index];
  }

  #report(change: JsonChange): JsonChange {
    this.#changes.push(change);
    return change;
  }

  #openString(top: Frame | undefined): void {
    // `{"a": 1 "b": 2}` reads the second member: the comma may be missing.
    if (top && !Array.isArray(top.container) && (top.expects === "key" || top.expects === "comma")) {
      this.#string = { isKey: true, slot: undefined, path: undefined, text: "", escape: "", change: undefined };
      return;
    }
    const slot = this.#nextSlot();
    const path = this.#pathOf(slot);
    this.#string = { isKey: false, slot, path, text: "", escape: "", change: undefined };
    this.#put(slot, "");
    if (path) this.#string.change = this.#report({ kind: "set", path, value: "" });
  }

  #extend(open: OpenString, piece: string): void {
    open.text += piece;
    if (open.isKey) return;
    this.#put(open.slot, open.text);
    if (!open.path) return;
    const change = open.change;
    if (change && this.#changes.at(-1) === change) {
      if (change.kind === "set") change.value = `${change.value as string}${piece}`;
      else change.text += piece;
    } else open.change = this.#report({ kind: "append", path: open.path, text: piece });
  }

  #closeString(open: OpenString): void {
    this.#string = undefined;
    const top = this.#frames.at(-1);
    if (!open.isKey) return this.#ended(top);
    if (!top) return;
    top.key = open.text;
    top.expects = "colon";
  }

  #endToken(): void {
    const token = this.#token;
    const slot = this.#tokenSlot;
    this.#token = "";
    this.#tokenSlot = undefined;
    const value = tokenValue(token, false);
    if (value !== undefined) {
      this.#put(slot, value);
      const path = this.#pathOf(slot);
      if (path) this.#report({ kind: "set", path, value });
    }
    this.#ended(this.#frames.at(-1));
  }

  #pendingToken(): { slot: Slot; value: Json } | undefined {
    const slot = this.#tokenSlot;
    if (!slot || this.#token === "" || this.#token.length > MAX_PENDING_TOKEN) return undefined;
    const value = tokenValue(this.#token, true);
    return value === undefined ? undefined : { slot, value };
  }

  #open(container: Json[] | { [key: string]: Json }): void {
    const slot = this.#nextSlot();
    const path = this.#pathOf(slot);
    this.#put(slot, container);
    this.#frames.push({ container, slot, path, reportsInside: path !== undefined && path.length < MAX_REPORTED_DEPTH, size: 0, key: undefined, expects: Array.isArray(container) ? "value" : "key" });
    this.#copyCost += 1;
    this.#stale = true;
    if (path) this.#report({ kind: "set", path, value: Array.isArray(container) ? [] : {} });
  }

  #close(): void {
    const frame = this.#frames.pop();
    if (!frame) return; // a closer outside every container
    this.#copyCost -= frame.size + 1;
    this.#stale = true;
    if (frame.path && !frame.reportsInside) this.#report({ kind: "set", path: frame.path, value: frame.container });
    this.#ended(this.#frames.at(-1));
  }

  /** A value inside `top` ended, or the root value when there is no container open. */
  #ended(top: Frame | undefined): void {
    if (top) top.expects = "comma";
    else if (this.#root !== undefined) this.#over = true;
  }

  #put(slot: Slot | undefined, value: Json): void {
    if (!slot) return;
    this.#stale = true;
    if (slot.at === "root") {
      this.#root = value;
      return;
    }
    const top = this.#frames.at(-1)!;
    const c = top.container;
    const isNew = slot.at === "element" ? slot.index === (c as Json[]).length : !Object.hasOwn(c, slot.key);
    if (isNew) {
      top.size++;
      this.#copyCost++;
    }
    place(c, slot, value);
  }

  /** Copies of the open containers, from the innermost out, each holding its open child's copy. */
  #copy(pending: { slot: Slot; value: Json } | undefined): Json | undefined {
    if (this.#frames.length === 0) return pending?.slot.at === "root" ? pending.value : this.#root;
    let child: Json | undefined;
    let childSlot: Slot | undefined;
    for (let depth = this.#frames.length - 1; depth >= 0; depth--) {
      const frame = this.#frames[depth]!;
      const copy = Array.isArray(frame.container) ? frame.container.slice() : { ...frame.container };
      if (pending && depth === this.#frames.length - 1) place(copy, pending.slot, pending.value);
      if (child !== undefined && childSlot) place(copy, childSlot, child);
      child = copy;
      childSlot = frame.slot;
    }
    // The outermost open container is the root, unless it stands where no value can go.
    return childSlot?.at === "root" ? child : this.#root;
  }
}

/** A finished token's value (a literal or a number), or, `unfinished`, what a token cut short shows; undefined drops it. */
function tokenValue(token: string, unfinished: boolean): Json | undefined {
  for (const [word, value] of WORDS) if (unfinished ? word.startsWith(token) : word === token) return value;
  if (NUMBER.test(token)) return Number(token);
  const mantissa = unfinished ? MANTISSA_ONLY.exec(token) : null;
  return mantissa ? Number(mantissa[1]) : undefined;
}

function place(container: Json[] | { [key: string]: Json }, slot: Slot, value: Json): void {
  if (slot.at === "element") (container as Json[])[slot.index] = value;
  // `__proto__` becomes an own member, as JSON.parse makes it, not the prototype.
  else if (slot.at === "member") Object.defineProperty(container, slot.key, { value, writable: true, enumerable: true, configurable: true });
}

/**
 * pi-ai's `ToolCallArgumentsStream`: a tool call's argument text read as it streams in. `append`
 * answers the arguments so far: a new object each time they changed, the same one otherwise, and
 * `{}` while the text holds no object yet. `replace` takes a provider's whole text (continuing it
 * when it extends what came before); `finish` parses the complete text once.
 */
export class ToolCallArgumentsStream {
  #text = "";
  #parser = new StreamingJsonParser();
  #seen: Json | undefined = undefined;
  #arguments: Record<string, unknown> = {};

  get text(): string {
    return this.#text;
  }

  append(delta: string): Record<string, unknown> {
    this.#text += delta;
    this.#parser.append(delta);
    return this.#current();
  }

  replace(text: string): { delta: string | undefined; arguments: Record<string, unknown> } {
    if (text.startsWith(this.#text)) {
      const delta = text.slice(this.#text.length);
      return { delta, arguments: delta === "" ? this.#current() : this.append(delta) };
    }
    this.#text = "";
    this.#parser = new StreamingJsonParser();
    return { delta: undefined, arguments: this.append(text) };
  }

  finish(): { arguments: Record<string, unknown>; argumentsError?: string } {
    return parseToolCallArguments(this.#text);
  }

  #current(): Record<string, unknown> {
    const value = this.#parser.snapshot();
    if (value !== this.#seen) {
      this.#seen = value;
      this.#arguments = typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
    }
    return this.#arguments;
  }
}
