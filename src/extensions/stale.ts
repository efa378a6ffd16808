/**
 * The reference's rule for a replaced extension instance: once its session is replaced or the
 * extensions are reloaded, every member of the `pi` and `ctx` it captured throws instead of
 * acting on the new session. Getters throw when read, functions when called (so a method taken
 * earlier still throws), as the reference's guarded members do.
 */

export const STALE_MESSAGE =
  "this extension instance was replaced (a session change or a reload): its captured pi and ctx no longer work. " +
  "Use the ctx a new handler or command receives; after ctx.newSession(), ctx.fork() or ctx.switchSession() do later work in withSession with the ctx it passes, and after await ctx.reload() leave the old ctx alone.";

/** A copy of `target` whose members throw STALE_MESSAGE once `stale()` answers true. */
export function guardStale<T extends object>(target: T, stale: () => boolean): T {
  const check = () => {
    if (stale()) throw new Error(STALE_MESSAGE);
  };
  const out: Record<PropertyKey, unknown> = {};
  const all = Object.getOwnPropertyDescriptors(target);
  // Symbol-keyed members too (pion's own, such as the MCP host of the built-in factories).
  for (const key of Reflect.ownKeys(all)) {
    const d = all[key as keyof typeof all]!;
    if (d.get) {
      const get = d.get;
      Object.defineProperty(out, key, { enumerable: d.enumerable ?? true, configurable: true, get: () => (check(), get.call(target)) });
    } else if (typeof d.value === "function") {
      const fn = d.value as (...args: unknown[]) => unknown;
      out[key] = (...args: unknown[]) => (check(), fn.apply(target, args));
    } else {
      Object.defineProperty(out, key, { enumerable: d.enumerable ?? true, configurable: true, get: () => (check(), (target as Record<PropertyKey, unknown>)[key]) });
    }
  }
  return out as T;
}
