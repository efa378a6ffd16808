/**
 * The one place that knows pion's credentials: which variables to keep from the processes
 * pion starts, and which values to mask wherever output could carry them to the model, a
 * host or the disk. Composed once per process (cli → compose); everything that starts a
 * process or records output gets it as an argument.
 */
import { ByteStreamMasker, type ByteSecret } from "./byte-mask.ts";
import { buildChildEnv, isPionSecret, type ShellEnvSettings } from "./child-env.ts";

/** A credential pion uses, as the model registry describes it (providers/models.ts `credentials()`). */
export interface Credential {
  /** Shown in place of the value: the variable's name, `--api-key`, or `<provider> apiKey`. */
  label: string;
  /** Variables the credential is read from (stripped from children whether set or not). */
  envNames: readonly string[];
  /** The resolved value, when known. */
  value?: string;
}

export interface CredentialGuard {
  /** The environment for a process pion starts; `explicit` entries (an MCP server's `env`) pass as given. */
  childEnv(explicit?: Readonly<Record<string, string>>): Record<string, string>;
  /** `text` with every known credential value replaced by `[redacted: LABEL]`. */
  mask(text: string): string;
  /** `value` with every string in it masked; the same object when nothing changed. */
  maskDeep<T>(value: T): T;
  /** A complete buffer masked; `bytes` itself when nothing matched. */
  maskBytes(bytes: Uint8Array): Uint8Array;
  /** A masker for a chunked byte stream, or undefined when pion knows no credential value. */
  byteStream(): ByteStreamMasker | undefined;
  /**
   * `text` as the output so far of something still running (a partial result: a snapshot of
   * everything until now): masked, and an end that could begin a credential left out, as the
   * byte stream holds it back; a later snapshot or the final output shows what it became.
   */
  maskUnfinished(text: string): string;
  /**
   * Credentials learned after start-up (the `${VAR}` values of MCP servers): every later
   * childEnv, mask and masker knows them too. Does not read `credentials` yet.
   */
  addCredentials(credentials: readonly Credential[]): void;
}

/**
 * Values shorter than this are not masked: a keyless provider's placeholder or a word like
 * "dummy" would otherwise be replaced all over the model's view of the code.
 */
export const MIN_SECRET_LENGTH = 8;

export interface GuardOptions {
  /** pion's own environment (read on every childEnv call: extensions may change it). */
  env: Readonly<Record<string, string | undefined>>;
  /** The credentials of every configured provider; called once, on first use (it may resolve `!command` keys). */
  credentials: () => readonly Credential[];
  shellEnv?: ShellEnvSettings;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

interface Known {
  names: Set<string>;
  /** Longest first, so a secret containing another is masked whole. */
  secrets: { value: string; replacement: string }[];
  bytes: ByteSecret[];
}

export function createCredentialGuard(o: GuardOptions): CredentialGuard {
  let known: Known | undefined;
  let configured: readonly Credential[] | undefined;
  const added: Credential[] = [];
  const get = (): Known => {
    if (known) return known;
    const names = new Set<string>();
    const byValue = new Map<string, string>();
    const add = (label: string, value: string | undefined) => {
      if (value && value.length >= MIN_SECRET_LENGTH && !byValue.has(value)) byValue.set(value, label);
    };
    configured ??= o.credentials();
    for (const c of [...configured, ...added]) {
      for (const n of c.envNames) names.add(n);
      add(c.label, c.value);
      for (const n of c.envNames) add(n, o.env[n]);
    }
    for (const [n, value] of Object.entries(o.env)) if (isPionSecret(n)) add(n, value);
    const secrets = [...byValue]
      .map(([value, label]) => ({ value, replacement: `[redacted: ${label}]` }))
      .sort((a, b) => b.value.length - a.value.length);
    const bytes = secrets.map((s) => ({ bytes: encoder.encode(s.value), replacement: encoder.encode(s.replacement) }));
    known = { names, secrets, bytes };
    return known;
  };

  const mask = (text: string): string => {
    let out = text;
    for (const s of get().secrets) if (out.includes(s.value)) out = out.replaceAll(s.value, s.replacement);
    return out;
  };
  const maskDeep = <T>(value: T): T => {
    if (get().secrets.length === 0) return value;
    return deep(value, mask) as T;
  };

  return {
    childEnv: (explicit) => {
      const k = get();
      return buildChildEnv(o.env, { ...o.shellEnv, credentialNames: k.names, secretValues: k.secrets.map((s) => s.value) }, explicit);
    },
    mask,
    maskDeep,
    maskBytes: (bytes) => {
      const k = get();
      return k.bytes.length === 0 ? bytes : new ByteStreamMasker(k.bytes).push(bytes, true);
    },
    byteStream: () => {
      const k = get();
      return k.bytes.length === 0 ? undefined : new ByteStreamMasker(k.bytes);
    },
    maskUnfinished: (text) => {
      const k = get();
      if (k.bytes.length === 0) return text;
      const masker = new ByteStreamMasker(k.bytes);
      const out = masker.push(encoder.encode(text), false);
      return masker.masked === 0 && masker.held === 0 ? text : decoder.decode(out);
    },
    addCredentials: (credentials) => {
      if (credentials.length === 0) return;
      added.push(...credentials);
      known = undefined;
    },
  };
}

/** Strings inside `value` mapped by `f`; unchanged branches keep their identity. Image data is left alone. */
function deep(value: unknown, f: (s: string) => string): unknown {
  if (typeof value === "string") return f(value);
  if (Array.isArray(value)) {
    let changed = false;
    const out = value.map((v) => {
      const m = deep(v, f);
      if (m !== v) changed = true;
      return m;
    });
    return changed ? out : value;
  }
  if (value && typeof value === "object") {
    const obj = value as Record<string, unknown>;
    if (obj.type === "image" && typeof obj.data === "string") return value;
    let out: Record<string, unknown> | undefined;
    for (const [k, v] of Object.entries(obj)) {
      const m = deep(v, f);
      if (m !== v) (out ??= { ...obj })[k] = m;
    }
    return out ?? value;
  }
  return value;
}
