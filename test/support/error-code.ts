import { PionError } from "../../src/util/errors.ts";

/** The code of the PionError `fn` throws; undefined when it returns, a note when it throws something else. */
export function errorCode(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return err instanceof PionError ? err.code : `not a PionError: ${String(err)}`;
  }
  return undefined;
}
