export {};
/** Build dist/pion: one self-contained executable (text assets embedded, version injected). */
const commit = (await Bun.$`git rev-parse --short HEAD`.nothrow().quiet().text()).trim() || "unknown";
// The import check's thread (src/store/import-check.ts) runs this code, given as a string (the binary
// would look a worker file it does not embed up in the working directory, a folder pion must not run code from).
const check = await Bun.build({ entrypoints: ["./src/store/import-check.ts"], target: "bun", format: "esm", minify: true });
if (!check.success) {
  for (const log of check.logs) console.error(log);
  process.exit(1);
}
const checkCode = await check.outputs[0]!.text();
const result = await Bun.build({
  entrypoints: ["./src/cli.ts"],
  // pion runs inside users' projects: their .env and bunfig.toml (whose preload scripts would
  // run inside pion) are theirs, never pion's configuration.
  compile: { outfile: "./dist/pion", autoloadDotenv: false, autoloadBunfig: false },
  define: { PION_COMMIT: JSON.stringify(commit), PION_IMPORT_CHECK: JSON.stringify(checkCode) },
  minify: true,
  bytecode: true,
  // Chunks per dynamic import: the SDKs, extensions and exports are loaded only when used.
  format: "esm",
  splitting: true,
  sourcemap: "linked",
});
if (!result.success) {
  for (const log of result.logs) console.error(log);
  process.exit(1);
}
console.error(`built dist/pion (${commit})`);

// The wire schemas ship beside the binary in every release (the binary itself needs nothing beside it).
await Bun.$`rm -rf dist/schemas && cp -r schemas dist/schemas`;
