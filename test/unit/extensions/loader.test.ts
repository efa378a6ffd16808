import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { discoverExtensions } from "../../../src/extensions/discover.ts";
import { resourceList } from "../../../src/resources/resource-list.ts";
import { loadExtensions } from "../../../src/extensions/loader.ts";
import { badSyntaxExtension, fakePort, fixture } from "./fake-port.ts";

describe("loadExtensions", () => {
  test("loads good modules and reports each failure as an extension_error with event load", async () => {
    const { port, errors } = fakePort();
    const bad = badSyntaxExtension();
    const paths = [bad, ...["hooks.ts", "no-default.ts", "throws.ts", "missing.ts", "async-factory.js", "tools.ts"].map(fixture)];
    const runner = await loadExtensions(paths, port);

    expect(runner.loaded).toEqual([{ path: fixture("hooks.ts") }, { path: fixture("async-factory.js") }, { path: fixture("tools.ts") }]);
    const failures = errors();
    expect(failures.map((f) => [f.extensionPath, f.event])).toEqual([
      [bad, "load"],
      [fixture("no-default.ts"), "load"],
      [fixture("throws.ts"), "load"],
      [fixture("missing.ts"), "load"],
    ]);
    expect(String(failures[0]!.error)).toContain("Failed to load extension");
    expect(String(failures[1]!.error)).toContain("default function");
    expect(String(failures[2]!.error)).toContain("factory exploded");
    expect(failures[3]!.error).toBe("Extension file not found");
    // What a failed factory registered before throwing is dropped.
    expect(runner.commands().map((c) => c.name)).toEqual(["async-ready", "add-echo"]);
  });

  test("relative paths resolve against the session cwd", async () => {
    const { port } = fakePort();
    port.cwd = join(fixture("."));
    const runner = await loadExtensions(["./async-factory.js"], port);
    expect(runner.loaded).toEqual([{ path: fixture("async-factory.js") }]);
  });

  test("an import of a name the virtual modules do not offer is a load error naming it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pion-ext-"));
    const file = join(dir, "needs-missing.ts");
    writeFileSync(file, `import { noSuchHelper } from "@earendil-works/pi-coding-agent";\nexport default () => noSuchHelper;\n`);
    const { port, errors } = fakePort();
    await loadExtensions([file], port);
    expect(errors()).toHaveLength(1);
    expect(String(errors()[0]!.error)).toContain("noSuchHelper");
  });

  test("stand-ins that need what pion lacks fail in the factory with a clear message", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pion-ext-"));
    const file = join(dir, "rpc-mode.ts");
    writeFileSync(file, `import { runRpcMode } from "@earendil-works/pi-coding-agent";\nexport default (pi) => runRpcMode({});\n`);
    const { port, errors } = fakePort();
    await loadExtensions([file], port);
    expect(errors()[0]).toMatchObject({ type: "extension_error", extensionPath: file, event: "load" });
    expect(String(errors()[0]!.error)).toContain("runRpcMode cannot run here");
  });
});

describe("discoverExtensions", () => {
  function layout() {
    const root = mkdtempSync(join(tmpdir(), "pion-disc-"));
    const home = join(root, "home");
    const cwd = join(root, "proj");
    const write = (path: string, text = "export default () => {};\n") => {
      mkdirSync(join(path, ".."), { recursive: true });
      writeFileSync(path, text);
    };
    write(join(home, "extensions", "b.ts"));
    write(join(home, "extensions", "a.js"));
    write(join(home, "extensions", "types.d.ts"));
    write(join(home, "extensions", "notes.md"));
    write(join(home, "extensions", "folder", "index.ts"));
    write(join(home, "extensions", "folder", "helper.ts"));
    write(join(home, "extensions", "empty", "readme.txt"));
    write(join(home, "extensions", "pkg", "package.json"), JSON.stringify({ pi: { extensions: ["./src/main.ts"] } }));
    write(join(home, "extensions", "pkg", "src", "main.ts"));
    write(join(cwd, ".pion", "extensions", "local.ts"));
    write(join(cwd, "tools", "extra.ts"));
    write(join(cwd, "dir-ext", "index.js"));
    return { root, home, cwd };
  }

  test("the reference's order: -e paths (files and folders), the project folder, listed paths, the user folder, packages; deduplicated where first found", () => {
    const { root, home, cwd } = layout();
    const listedFile = join(root, "listed.ts");
    writeFileSync(listedFile, "export default () => {};\n");
    const pkgRoot = join(root, "a-package");
    mkdirSync(pkgRoot);
    writeFileSync(join(pkgRoot, "index.ts"), "export default () => {};\n");
    const listed = resourceList([
      { entry: pkgRoot, base: root, level: "user", package: { source: "./a-package", root: pkgRoot } },
      { entry: listedFile, base: root, level: "project" },
    ]);
    const found = discoverExtensions({ home, cwd, listed, extra: ["tools/extra.ts", "dir-ext", join(home, "extensions/b.ts"), "nope.ts"], noDiscovery: false, project: true });
    const cli = { source: "cli", scope: "temporary", origin: "top-level" } as const;
    const user = { source: "auto", scope: "user", origin: "top-level", baseDir: home } as const;
    expect(found).toEqual([
      { path: join(cwd, "tools", "extra.ts"), found: cli },
      { path: join(cwd, "dir-ext", "index.js"), found: cli },
      { path: join(home, "extensions", "b.ts"), found: cli },
      { path: join(cwd, "nope.ts"), found: cli },
      { path: join(cwd, ".pion", "extensions", "local.ts"), found: { source: "auto", scope: "project", origin: "top-level", baseDir: join(cwd, ".pion") } },
      { path: listedFile, found: { source: "local", scope: "project", origin: "top-level" } },
      { path: join(home, "extensions", "a.js"), found: user },
      { path: join(home, "extensions", "folder", "index.ts"), found: user },
      { path: join(home, "extensions", "pkg", "src", "main.ts"), found: user },
      { path: join(pkgRoot, "index.ts"), found: { source: "./a-package", scope: "user", origin: "package", baseDir: pkgRoot } },
    ]);
  });

  test("an untrusted project: its .pion/extensions is not scanned, but a -e path inside it still loads", () => {
    const { home, cwd } = layout();
    const local = join(cwd, ".pion", "extensions", "local.ts");
    const paths = (o: Parameters<typeof discoverExtensions>[0]) => discoverExtensions(o).map((e) => e.path);
    expect(paths({ home, cwd, extra: [], noDiscovery: false, project: false })).not.toContain(local);
    expect(paths({ home, cwd, extra: [".pion/extensions/local.ts"], noDiscovery: false, project: false })[0]).toBe(local);
  });

  test("noDiscovery keeps only the explicit paths; missing folders are fine", () => {
    const { home, cwd } = layout();
    expect(discoverExtensions({ home, cwd, extra: ["tools/extra.ts"], noDiscovery: true, project: true }).map((e) => e.path)).toEqual([join(cwd, "tools", "extra.ts")]);
    expect(discoverExtensions({ home: join(home, "none"), cwd: join(cwd, "none"), extra: [], noDiscovery: false, project: true })).toEqual([]);
  });
});

describe("reloadExtensions", () => {
  test("'same' runs the loaded module's factory again, 'fresh' evaluates it anew; pi.events subscriptions go with the old instance", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pion-ext-"));
    const file = join(dir, "counts.ts");
    // How often the module was evaluated (a global set) and its factory run (a module-level count).
    writeFileSync(
      file,
      [
        "let runs = 0;",
        "(globalThis.__evaluations ??= new Set()).add(Math.random());",
        "export default (pi) => {",
        "  runs++;",
        '  pi.registerCommand("run-" + runs, { handler: async () => {} });',
        '  pi.events.on("count", (seen) => seen.push(runs));',
        '  globalThis.__emitCount = (seen) => pi.events.emit("count", seen);',
        "};",
      ].join("\n"),
    );
    const { port } = fakePort();
    const runner = await loadExtensions([file], port);
    const g = globalThis as { __evaluations?: Set<number>; __emitCount?: (seen: number[]) => void };
    const state = () => {
      const answered: number[] = [];
      g.__emitCount?.(answered);
      return { commands: runner.commands().map((c) => c.name), evaluations: g.__evaluations?.size, answered };
    };
    expect(state()).toEqual({ commands: ["run-1"], evaluations: 1, answered: [1] });
    await runner.reloadExtensions("same");
    expect(state()).toEqual({ commands: ["run-2"], evaluations: 1, answered: [2] });
    await runner.reloadExtensions("fresh");
    expect(state()).toEqual({ commands: ["run-1"], evaluations: 2, answered: [1] });
    await runner.reloadExtensions("same");
    expect(state()).toEqual({ commands: ["run-2"], evaluations: 2, answered: [2] });
  });

  test("a new list replaces the loaded one: extensions no longer in it are gone, new ones load, later rebinds keep the new list", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pion-ext-"));
    const ext = (name: string) => {
      const file = join(dir, `${name}.ts`);
      writeFileSync(file, `export default (pi) => { pi.registerCommand(${JSON.stringify(name)}, { handler: async () => {} }); };\n`);
      return file;
    };
    const [a, b, c] = ["a", "b", "c"].map(ext);
    const { port } = fakePort();
    const runner = await loadExtensions([a!, b!], port);
    const names = () => runner.commands().map((cmd) => cmd.name);
    expect(names()).toEqual(["a", "b"]);
    await runner.reloadExtensions("fresh", [a!, c!]);
    expect(names()).toEqual(["a", "c"]);
    await runner.reloadExtensions("same");
    expect(names()).toEqual(["a", "c"]);
  });
});
