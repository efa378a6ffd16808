import { runValueCommand } from "../credentials/config-value.ts";
import type { McpGuard } from "./connection.ts";

/**
 * `env` or `headers` with every `!command` value replaced by the command's output (run with
 * pion's own environment, as the user's shell would). The outputs are credentials from then on:
 * masked wherever pion shows text. A command that fails is an error naming the key.
 */
export function resolveCommandValues(values: Record<string, string>, where: string, guard: Pick<McpGuard, "addCredentials">): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(values)) {
    if (!val.startsWith("!")) {
      out[k] = val;
      continue;
    }
    const got = runValueCommand(val.slice(1), process.env, false);
    if (got === undefined) throw new Error(`The command for ${k} in ${where} failed or printed nothing`);
    guard.addCredentials([{ label: `${where.replace(/ of .*/, "")}.${k}`, envNames: [], value: got }]);
    out[k] = got;
  }
  return out;
}
