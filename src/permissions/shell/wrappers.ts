/**
 * Commands that run the command in their own words (`env FOO=1 rm f`, `timeout 5 rm f`,
 * `sudo -u x rm f`): how to skip their options to find it. An option a wrapper's table does
 * not know makes the line unanalysable: guessing which word is the command could let one
 * through unseen.
 */

/** A word of a command line: its value when known before the line runs, and its source text. */
export interface Word {
  value?: string;
  text: string;
}

interface WrapperSpec {
  /** Short options without a value. */
  flags?: string;
  /** Short options whose value is the rest of the word or the next word. */
  valued?: string;
  /** Short options whose value, if any, is the rest of the word (xargs `-i[R]`). */
  attached?: string;
  /** Long options without a value (`--x=v` is accepted too). */
  longFlags?: readonly string[];
  /** Long options with a value (`--x=v` or `--x v`). */
  longValued?: readonly string[];
  /** Options that make the words something other than a command to run, with why. */
  refuse?: Readonly<Record<string, string>>;
  /** `-10` (nice). */
  numeric?: boolean;
  /** `NAME=VALUE` words before the command (env). */
  assignments?: boolean;
  /** Operands before the command (timeout's duration). */
  leading?: number;
  /** The command run when the words name none (xargs: echo). */
  fallback?: string;
  /** The wrapper changes who runs the command (sudo): allow rules must cover it too. */
  elevates?: boolean;
  /** The command gets more words than the line shows (xargs appends its input). */
  appends?: boolean;
  /** Options whose value (or `{}` without one) is replaced in the command's words by input (xargs `-I`). */
  replaces?: readonly string[];
}

const WRAPPERS: Readonly<Record<string, WrapperSpec>> = {
  env: {
    flags: "i0v",
    valued: "uC",
    longFlags: ["--ignore-environment", "--null", "--debug"],
    longValued: ["--unset", "--chdir"],
    refuse: { "-S": "`env -S` splits a string into a command", "--split-string": "`env --split-string` splits a string into a command" },
    assignments: true,
  },
  command: { flags: "pvV" },
  builtin: {},
  exec: { flags: "cl", valued: "a" },
  nice: { valued: "n", numeric: true, longValued: ["--adjustment"] },
  nohup: {},
  setsid: { flags: "cfw", longFlags: ["--ctty", "--fork", "--wait"] },
  timeout: { flags: "v", valued: "sk", longFlags: ["--foreground", "--preserve-status", "--verbose"], longValued: ["--signal", "--kill-after"], leading: 1 },
  time: { flags: "pvaq", valued: "fo", longFlags: ["--portability", "--verbose", "--append", "--quiet"], longValued: ["--format", "--output"] },
  stdbuf: { valued: "ioe", longValued: ["--input", "--output", "--error"] },
  xargs: {
    flags: "0prtxo",
    valued: "adEILnPs",
    attached: "ile",
    longFlags: ["--null", "--no-run-if-empty", "--verbose", "--interactive", "--exit", "--open-tty", "--show-limits", "--replace", "--eof", "--max-lines"],
    longValued: ["--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars", "--process-slot-var"],
    fallback: "echo",
    appends: true,
    replaces: ["-I", "-i", "--replace"],
  },
  sudo: {
    flags: "AbBEHiKknNPSsVvl",
    valued: "ugpChDrtUTR",
    longFlags: ["--askpass", "--background", "--bell", "--preserve-env", "--set-home", "--login", "--remove-timestamp", "--reset-timestamp", "--non-interactive", "--preserve-groups", "--stdin", "--shell", "--validate", "--list"],
    longValued: ["--user", "--group", "--prompt", "--close-from", "--chdir", "--role", "--type", "--other-user", "--command-timeout", "--chroot", "--host"],
    refuse: { "-e": "`sudo -e` edits files as another user", "--edit": "`sudo --edit` edits files as another user" },
    elevates: true,
  },
  doas: { flags: "nsL", valued: "uC", elevates: true },
  coproc: {},
  busybox: {},
};

export type Unwrapped =
  | { kind: "none" }
  | { kind: "inner"; words: Word[]; elevates: boolean; appends: boolean }
  | { kind: "fail"; why: string };

/** The command a wrapper runs; `undefined` when `name` is no wrapper. */
export function unwrap(name: string, args: readonly Word[], isDangerousAssignment: (name: string) => boolean): Unwrapped | undefined {
  const spec = WRAPPERS[name];
  if (!spec) return undefined;
  let i = 0;
  let replaced: string | undefined;
  const unknown = (w: Word): Unwrapped => ({ kind: "fail", why: `cannot tell which command \`${name} ${w.text}\` runs` });
  options: while (i < args.length) {
    const w = args[i]!;
    if (w.value === undefined) {
      if (/^['"]?-/.test(w.text)) return unknown(w);
      break;
    }
    const v = w.value;
    if (v === "--") {
      i++;
      break;
    }
    if (v.startsWith("--")) {
      const long = v.split("=", 1)[0]!;
      if (spec.refuse?.[long]) return { kind: "fail", why: spec.refuse[long]! };
      if (spec.replaces?.includes(long)) replaced = v.includes("=") ? v.slice(v.indexOf("=") + 1) : "{}";
      if (spec.longFlags?.includes(long)) i++;
      else if (spec.longValued?.includes(long)) i += v.includes("=") ? 1 : 2;
      else return unknown(w);
      continue;
    }
    if (!v.startsWith("-") || v === "-") break;
    if (spec.numeric && /^-\d+$/.test(v)) {
      i++;
      continue;
    }
    for (let k = 1; k < v.length; k++) {
      const c = v[k]!;
      if (spec.refuse?.[`-${c}`]) return { kind: "fail", why: spec.refuse[`-${c}`]! };
      if (spec.flags?.includes(c)) continue;
      const rest = v.slice(k + 1);
      if (spec.attached?.includes(c)) {
        if (spec.replaces?.includes(`-${c}`)) replaced = rest || "{}";
        break;
      }
      if (spec.valued?.includes(c)) {
        if (spec.replaces?.includes(`-${c}`)) replaced = rest || args[i + 1]?.value;
        if (k === v.length - 1) i++;
        break;
      }
      return unknown(w);
    }
    i++;
    continue options;
  }
  if (spec.assignments) {
    for (; i < args.length; i++) {
      const m = /^([A-Za-z_][A-Za-z0-9_]*)=/.exec(args[i]!.value ?? args[i]!.text);
      if (!m) break;
      if (isDangerousAssignment(m[1]!)) return { kind: "fail", why: `\`${name} ${m[1]}=…\` changes which programs run` };
    }
  }
  i += spec.leading ?? 0;
  // Words the input is put into are known only when the line runs.
  const words = args.slice(i).map((w) => (replaced === undefined || w.value?.includes(replaced) === false ? w : { text: w.text }));
  if (spec.replaces && replaced === undefined && args.slice(0, i).some((w) => w.value === undefined)) return unknown(args[0]!);
  if (words.length === 0) {
    return spec.fallback ? { kind: "inner", words: [{ value: spec.fallback, text: spec.fallback }], elevates: spec.elevates === true, appends: spec.appends === true } : { kind: "none" };
  }
  return { kind: "inner", words, elevates: spec.elevates === true, appends: spec.appends === true };
}

export const SHELLS: ReadonlySet<string> = new Set(["sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "yash", "posh", "rbash"]);

export type ShellCall =
  | { kind: "script"; script: string }
  | { kind: "file" }
  | { kind: "info" }
  | { kind: "fail"; why: string };

/** What a shell invocation runs: a `-c` script, a script file, or its input. */
export function shellCall(name: string, args: readonly Word[]): ShellCall {
  let c = false;
  let i = 0;
  for (; i < args.length; i++) {
    const w = args[i]!;
    if (w.value === undefined) {
      if (/^['"]?[-+]/.test(w.text)) return { kind: "fail", why: `cannot tell what \`${name} ${w.text}\` runs` };
      break;
    }
    const v = w.value;
    if (v === "--" || v === "-") {
      i++;
      break;
    }
    if (v.startsWith("--")) {
      if (v === "--version" || v === "--help") return { kind: "info" };
      if (v === "--rcfile" || v === "--init-file") i++;
      continue;
    }
    if (!/^[-+]./.test(v)) break;
    for (const ch of v.slice(1)) {
      if (ch === "c") c = true;
      else if (ch === "s") return { kind: "fail", why: `\`${name} -s\` reads its commands from its input` };
      else if (ch === "o" || ch === "O") i++;
    }
  }
  const operand = args[i];
  if (c) {
    if (!operand) return { kind: "fail", why: `\`${name} -c\` has no script` };
    if (operand.value === undefined) return { kind: "fail", why: `the script of \`${name} -c\` is known only when the line runs` };
    return { kind: "script", script: operand.value };
  }
  if (operand) return { kind: "file" };
  return { kind: "fail", why: `\`${name}\` reads its commands from its input` };
}
