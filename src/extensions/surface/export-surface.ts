/**
 * The whole export surface of the reference's four packages, in pion's virtual modules. The
 * names come from reference-exports.json (generated from the installed reference by
 * gen-reference-exports.ts); every name a module does not implement itself gets a stand-in by
 * its kind, so an extension's `import { X }` never fails at load:
 *
 * - terminal UI (`headless`): a class that constructs and renders nothing, a function that
 *   returns nothing, as the reference's RPC mode, which has no terminal, leaves them unused;
 * - anything else pion does not offer (`unavailable`): a class or function that throws a clear
 *   error when constructed or called (extending such a class is fine);
 * - constants: the reference's numbers and booleans, an empty frozen object otherwise.
 */
import REFERENCE_EXPORTS from "./reference-exports.json" with { type: "json" };

/**
 * The reference release whose export surface these modules implement (reference-exports.json is
 * generated from it): pi-ai's `PI_AI_VERSION`, which extensions compare to gate what they use.
 */
export const REFERENCE_VERSION = "1.6.0";

import { REFERENCE_PACKAGES, type ReferencePackage } from "./reference-packages.ts";
export { REFERENCE_PACKAGES, type ReferencePackage };

export interface ReferenceExport {
  kind: string;
  value?: unknown;
}
export type ReferenceExports = Record<string, Record<string, ReferenceExport>>;
export type Behaviour = "pion" | "headless" | "unavailable";
export type Surface = Record<string, Record<string, ReferenceExport & { pion: Behaviour }>>;
type Exports = Record<string, unknown>;

// Marks kept aside (not as properties): a few hundred stand-ins are made when a module is first imported.
const UNAVAILABLE = new WeakSet<object>();
const HEADLESS = new WeakSet<object>();
const mark = <T extends object>(set: WeakSet<object>, value: T): T => (set.add(value), value);

/** A function pion cannot offer: throws when called, naming itself (and why, when given). */
export function unavailable(name: string, why?: string): (...args: unknown[]) => never {
  return mark(UNAVAILABLE, () => {
    throw new Error(`${name} is not available in pion extensions${why ? `: ${why}` : ""}`);
  });
}

/** A terminal-UI value: marked so the generated list can say so. */
export const headless = <T extends object>(value: T): T => mark(HEADLESS, value);

/** A TUI component class: constructs, renders no lines, never drawn. */
export function headlessClass(name: string): unknown {
  const named = {
    [name]: class {
      constructor(..._args: unknown[]) {}
      render(_width?: number): string[] {
        return [];
      }
      invalidate(): void {}
    },
  };
  return headless(named[name]!);
}

function unavailableClass(name: string): unknown {
  const named: Record<string, new (...args: unknown[]) => object> = {
    [name]: class {
      constructor(..._args: unknown[]) {
        if (new.target === named[name]) throw new Error(`${name} is not available in pion extensions`);
      }
    },
  };
  return mark(UNAVAILABLE, named[name]!);
}

/** Whether a name the reference exports is terminal UI (its pi-tui package, components, themes, key hints, rendering). */
export function isTerminalUi(pkg: string, name: string): boolean {
  if (pkg === "pi-tui") return true;
  return /Component$|Selector|Theme|theme$|Editor$|Border$|Loader$|^InteractiveMode$|^highlightCode$|^renderDiff$|^copyToClipboard$|^key(Hint|Text)$|^rawKeyHint$|^getLanguageFromPath$/.test(name);
}

function standIn(pkg: string, name: string, ref: ReferenceExport): unknown {
  const tui = isTerminalUi(pkg, name);
  switch (ref.kind) {
    case "class":
      return tui ? headlessClass(name) : unavailableClass(name);
    case "function":
      return tui ? headless(() => undefined) : unavailable(name);
    case "number":
    case "boolean":
      return ref.value;
    case "string":
      return "";
    default:
      return mark(tui ? HEADLESS : UNAVAILABLE, Object.freeze({}));
  }
}

/** Every reference name `exports` lacks, added as its stand-in (the module object is changed and returned). */
export function completeSurface(pkg: ReferencePackage, exports: Exports, list: ReferenceExports = REFERENCE_EXPORTS as ReferenceExports): Exports {
  for (const [name, ref] of Object.entries(list[pkg] ?? {})) {
    if (!(name in exports)) exports[name] = standIn(pkg, name, ref);
  }
  return exports;
}

/** What a virtual module does with `name`: its own implementation, a headless stand-in, or an error when used. */
export function behaviourOf(value: unknown): Behaviour {
  if ((typeof value === "function" || typeof value === "object") && value !== null) {
    if (UNAVAILABLE.has(value)) return "unavailable";
    if (HEADLESS.has(value)) return "headless";
  }
  return "pion";
}

/** The generated list: the reference's names with what pion's completed modules do with each. */
export function describeSurface(ref: ReferenceExports, modules: Record<ReferencePackage, Exports>): Surface {
  const out: Surface = {};
  for (const pkg of REFERENCE_PACKAGES) {
    const mod = completeSurface(pkg, { ...modules[pkg] }, ref);
    out[pkg] = Object.fromEntries(Object.entries(ref[pkg] ?? {}).map(([name, r]) => [name, { ...r, pion: behaviourOf(mod[name]) }]));
  }
  return out;
}
