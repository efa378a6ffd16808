import { afterAll } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const home = mkdtempSync(join(tmpdir(), "pion-test-"));
process.env.PION_HOME = home;
// Everything a test run leaves in the temp folder (pion's full-output files of long bash runs,
// the tests' own temp dirs) goes in one folder that is removed at the end.
const scratch = mkdtempSync(join(tmpdir(), "pion-tmp-"));
process.env.TMPDIR = scratch;
for (const key of Object.keys(process.env)) {
  if (/_API_KEY$|_BASE_URL$/.test(key)) delete process.env[key]; // tests must opt in to a model
}
afterAll(() => {
  rmSync(home, { recursive: true, force: true });
  rmSync(scratch, { recursive: true, force: true });
});
