import { describe, test } from "bun:test";

/**
 * A describe block for tests that need something outside the repository (the reference
 * package, python3, a browser). `missing` says what is absent, or is undefined when all is
 * there. Locally a missing need skips the block (and says so on stderr); under CI=true it is
 * one failing test naming it, so CI can never pass by skipping.
 */
export function describeWith(title: string, missing: string | undefined, body: () => void): void {
  if (missing === undefined) {
    describe(title, body);
  } else if (process.env.CI) {
    describe(title, () => {
      test(`needs ${missing}`, () => {
        throw new Error(`${title}: ${missing} (required under CI=true)`);
      });
    });
  } else {
    process.stderr.write(`skipping "${title}": ${missing}\n`);
    describe.skip(title, body);
  }
}
