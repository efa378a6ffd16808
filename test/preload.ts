import { afterAll } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import catalogIndex from "../src/providers/catalog/builtin-index.json" with { type: "json" };
import { referenceEnvNames } from "../src/providers/env-names.ts";

const home = mkdtempSync(join(tmpdir(), "pion-test-"));
process.env.PION_HOME = home;
// The reference's agent folder (read beside PION_HOME) is an empty temp folder too: no test, and
// no pion a test spawns, reads the machine's ~/.pi/agent. A test that wants one sets its own.
const piAgentDir = mkdtempSync(join(tmpdir(), "pion-test-pi-"));
process.env.PI_CODING_AGENT_DIR = piAgentDir;
// Everything a test run leaves in the temp folder (pion's full-output files of long bash runs,
// the tests' own temp dirs) goes in one folder that is removed at the end.
const scratch = mkdtempSync(join(tmpdir(), "pion-tmp-"));
process.env.TMPDIR = scratch;
// Tests must opt in to a model: no key from the developer's machine, including the catalog's
// non-*_API_KEY variables (GITHUB_TOKEN, HF_TOKEN, ...), which make their providers available.
const catalogKeys = new Set([...Object.values(catalogIndex.env).flat(), ...referenceEnvNames()]);
for (const key of Object.keys(process.env)) {
  if (/_API_KEY$|_BASE_URL$|^(AWS|GOOGLE|GCLOUD|AZURE)_/.test(key) || catalogKeys.has(key)) delete process.env[key];
}
// The cloud SDKs' own credential chains read files and metadata services: point them at nothing.
process.env.AWS_CONFIG_FILE = join(home, "aws-config-none");
process.env.AWS_SHARED_CREDENTIALS_FILE = join(home, "aws-credentials-none");
process.env.AWS_EC2_METADATA_DISABLED = "true";
afterAll(() => {
  rmSync(home, { recursive: true, force: true });
  rmSync(piAgentDir, { recursive: true, force: true });
  rmSync(scratch, { recursive: true, force: true });
});
