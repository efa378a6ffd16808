/**
 * Build dist/pion: one self-contained executable (text assets embedded, version injected).
 * `bun run build --release` builds every release target instead (release.ts), through the same
 * `compilePion`: a release binary embeds exactly what the host binary embeds.
 */

/** What every binary embeds beyond its sources; the same for every target (JavaScript and a SQLite file). */
export interface Embeds {
  commit: string;
  workers: Record<string, string>;
  /**
   * Workers too large to keep in every process (codemode's carries QuickJS's WASM): the path of
   * each bundled file, embedded as a file that `pion-worker:<name>` names, read when it starts.
   */
  lazyWorkers: Record<string, string>;
  dbTemplate: string;
}

export async function prepareEmbeds(): Promise<Embeds> {
  const commit = (await Bun.$`git rev-parse --short HEAD`.nothrow().quiet().text()).trim() || "unknown";
  // The threads pion starts run their module bundled into a string (src/util/worker-code.ts: the binary
  // would look a worker file it does not embed up in the working directory, a folder pion must not run code from).
  const WORKERS = { "import-check": "./src/store/import-check.ts", checkpoint: "./src/store/checkpoint-worker.ts" };
  const LAZY_WORKERS = { codemode: "./src/codemode/worker.ts" };
  const bundle = async (entries: Record<string, string>) => {
    const out: Record<string, string> = {};
    for (const [name, entry] of Object.entries(entries)) {
      const built = await Bun.build({ entrypoints: [entry], target: "bun", format: "esm", minify: true });
      if (!built.success) fail(built.logs);
      out[name] = await built.outputs[0]!.text();
    }
    return out;
  };
  const workers = await bundle(WORKERS);
  // Written out once: the binary embeds each as a file (read only when the worker starts), not as
  // a string in a chunk, which the bytecode would hold a second time.
  const lazyDir = (await Bun.$`mktemp -d`.text()).trim();
  const lazyWorkers: Record<string, string> = {};
  for (const [name, code] of Object.entries(await bundle(LAZY_WORKERS))) {
    lazyWorkers[name] = `${lazyDir}/${name}-worker.js`;
    await Bun.write(lazyWorkers[name], code);
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
  return { commit, workers, lazyWorkers, dbTemplate };
}

/** The host's name in the release's spelling (`linux-x64`, `darwin-arm64`, `windows-x64`). */
export const hostTarget = (): string => `${process.platform === "win32" ? "windows" : process.platform}-${process.arch}`;

/**
 * Compiles src/cli.ts into `outfile`. `target` is a release target's name (`linux-arm64`,
 * `linux-x64-musl`, ...; Bun's `bun-<target>`), omitted for the host; `pion --version` prints it.
 * Exits the build on any bundler error.
 */
export async function compilePion(embeds: Embeds, outfile: string, target?: string): Promise<void> {
  const result = await Bun.build({
    entrypoints: ["./src/cli.ts"],
    // pion runs inside users' projects: their .env and bunfig.toml (whose preload scripts would
    // run inside pion) are theirs, never pion's configuration.
    compile: {
      outfile,
      autoloadDotenv: false,
      autoloadBunfig: false,
      ...(target ? { target: `bun-${target}` as Bun.Build.CompileTarget } : {}),
    },
    define: {
      PION_COMMIT: JSON.stringify(embeds.commit),
      PION_TARGET: JSON.stringify(target ?? hostTarget()),
      PION_WORKERS: JSON.stringify(embeds.workers),
      PION_DB_TEMPLATE: JSON.stringify(embeds.dbTemplate),
    },
    plugins: [lazyWorkerPlugin(embeds.lazyWorkers), packageDocsPlugin()],
    minify: true,
    bytecode: true,
    // Chunks per dynamic import: the SDKs, extensions and exports are loaded only when used.
    format: "esm",
    splitting: true,
    sourcemap: "linked",
  });
  if (!result.success) fail(result.logs);
}

/** `import("pion-worker:<name>")` answers the embedded path of the bundled worker's file (src/util/worker-code.ts). */
function lazyWorkerPlugin(files: Record<string, string>): Bun.BunPlugin {
  return {
    name: "pion-lazy-workers",
    setup(b) {
      b.onResolve({ filter: /^pion-worker:/ }, (a) => ({ path: a.path.slice("pion-worker:".length), namespace: "pion-worker" }));
      b.onLoad({ filter: /.*/, namespace: "pion-worker" }, (a) => {
        const file = files[a.path];
        if (file === undefined) throw new Error(`no lazy worker named ${a.path}`);
        return { contents: `import path from ${JSON.stringify(file)} with { type: "file" };\nexport default path;`, loader: "js" };
      });
    },
  };
}

/**
 * The README and docs the reference ships in its package (src/extensions/surface/package-files.ts), each
 * embedded as a file: src/extensions/surface/package-docs.ts, which maps them to the repository's own
 * files from source, becomes a map to the embedded ones; they are written out only when an extension asks.
 */
function packageDocsPlugin(): Bun.BunPlugin {
  return {
    name: "pion-package-docs",
    setup(b) {
      b.onLoad({ filter: /[\\/]src[\\/]extensions[\\/]surface[\\/]package-docs\.ts$/ }, async () => {
        const { listPackageFiles } = await import("./src/extensions/surface/package-files.ts");
        const root = import.meta.dir;
        const files = listPackageFiles(root);
        const imports = files.map((rel, i) => `import f${i} from ${JSON.stringify(`${root}/${rel}`)} with { type: "file" };`);
        const map = files.map((rel, i) => `${JSON.stringify(rel)}: f${i}`).join(", ");
        return { contents: `${imports.join("\n")}\nexport default { ${map} };`, loader: "js" };
      });
    },
  };
}

function fail(logs: readonly unknown[]): never {
  for (const log of logs) console.error(log);
  process.exit(1);
}

if (import.meta.main) {
  if (process.argv.includes("--release")) {
    const { buildRelease } = await import("./release.ts");
    await buildRelease().catch((err: unknown) => {
      console.error(`release: ${err instanceof Error ? err.message : String(err)}`);
      process.exit(1);
    });
  } else {
    const embeds = await prepareEmbeds();
    await compilePion(embeds, "./dist/pion");
    console.error(`built dist/pion (${embeds.commit})`);
    // The wire schemas ship beside the binary in every release (the binary itself needs nothing beside it).
    await Bun.$`rm -rf dist/schemas && cp -r schemas dist/schemas`;
  }
}
