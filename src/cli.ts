#!/usr/bin/env bun
import { runCli } from "./modes/command-line.ts";
import { stdioWritten } from "./util/stdio.ts";

const argv = process.argv.slice(2);

// `pion run <program.ts> [args]`: a program written for the reference's SDK, run on pion's
// modules (modes/program.ts); it ends when its own work does, as under node or bun.
if (argv[0] === "run" && (await import("./modes/program.ts")).isProgramPath(argv[1])) {
  await (await import("./modes/program.ts")).runProgram(argv[1]!, argv.slice(2));
} else {
  // Exit only once what was written reached the OS: a pipe gets the whole output.
  const code = await runCli(argv);
  await stdioWritten();
  process.exit(code);
}
