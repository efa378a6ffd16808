export {};
/** Build dist/pion: one self-contained executable (text assets embedded, version injected). */
const commit = (await Bun.$`git rev-parse --short HEAD`.nothrow().quiet().text()).trim() || "unknown";
// The threads pion starts run their module bundled into a string (src/util/worker-code.ts: the binary
// would look a worker file it does not embed up in the working directory, a folder pion must not run code from).
const WORKERS = { "import-check": "./src/store/import-check.ts", checkpoint: "./src/store/checkpoint-worker.ts" };
const workers: Record<string, string> = {};
for (const [name, entry] of Object.entries(WORKERS)) {
  const built = await Bun.build({ entrypoints: [entry], target: "bun", format: "esm", minify: true });
  if (!built.success) {
    for (const log of built.logs) console.error(log);
    process.exit(1);
  }
  workers[name] = await built.outputs[0]!.text();
}
// A new home's database, made at build time as pion makes one (16 KB pages, WAL, the schema): in the
// binary a new database is this file written out (src/store/sqlite-template.ts), not 6 ms of pragmas
// and migrations in the first command that needs it.
const dbTemplate = await (async () => {
  const { openSqliteStore } = await import("./src/store/sqlite-store.ts");
  const { Database } = await import("bun:sqlite");
  const dir = (await Bun.$`mktemp -d`.text()).trim();
  try {
    openSqliteStore(`${dir}/pion.db`).close();
    const db = new Database(`${dir}/pion.db`);
    db.run("PRAGMA wal_checkpoint(TRUNCATE)"); // everything in the file itself
    db.close();
    return Buffer.from(Bun.gzipSync(await Bun.file(`${dir}/pion.db`).bytes())).toString("base64");
  } finally {
    await Bun.$`rm -rf ${dir}`;
  }
})();
const result = await Bun.build({
  entrypoints: ["./src/cli.ts"],
  // pion runs inside users' projects: their .env and bunfig.toml (whose preload scripts would
  // run inside pion) are theirs, never pion's configuration.
  compile: { outfile: "./dist/pion", autoloadDotenv: false, autoloadBunfig: false },
  define: { PION_COMMIT: JSON.stringify(commit), PION_WORKERS: JSON.stringify(workers), PION_DB_TEMPLATE: JSON.stringify(dbTemplate) },
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
