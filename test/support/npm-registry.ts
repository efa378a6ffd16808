/**
 * A local npm registry for package tests: packuments and tarballs served by Bun.serve on port 0,
 * so the machine's real npm installs from it (`npm_config_registry`) without the network. A
 * published version is a `package/` folder tarred as npm packs it; each packument is sent with
 * `no-store`, so npm sees a version published mid-test at once.
 */
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

interface Version {
  name: string;
  version: string;
  dist: { tarball: string; shasum: string; integrity: string };
}

export interface NpmRegistry {
  /** `http://127.0.0.1:<port>/` */
  url: string;
  /** Publish `name@version` (its package.json gets name and version; `files` beside it) and make it `latest`. */
  publish(name: string, version: string, files?: Record<string, string>, manifest?: Record<string, unknown>): Promise<void>;
  /** Package names whose packument was asked for, in order: what npm looked up. */
  lookups: string[];
  /** The environment that points npm at this registry, with a cache of its own. */
  env: Record<string, string>;
  stop(): void;
}

export function startNpmRegistry(): NpmRegistry {
  const root = mkdtempSync(join(tmpdir(), "pion-npm-registry-"));
  const packages = new Map<string, { latest: string; versions: Record<string, Version> }>();
  const tarballs = new Map<string, Uint8Array>();
  const lookups: string[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(req) {
      const path = decodeURIComponent(new URL(req.url).pathname.slice(1));
      const tarball = tarballs.get(path);
      if (tarball) return new Response(tarball, { headers: { "content-type": "application/octet-stream" } });
      const pkg = packages.get(path);
      lookups.push(path);
      if (!pkg) return Response.json({ error: "Not found" }, { status: 404 });
      return Response.json({ name: path, "dist-tags": { latest: pkg.latest }, versions: pkg.versions }, { headers: { "cache-control": "no-store" } });
    },
  });
  const url = `http://127.0.0.1:${server.port}/`;
  const cache = join(root, "cache");
  return {
    url,
    lookups,
    env: { npm_config_registry: url, npm_config_cache: cache, npm_config_update_notifier: "false", npm_config_audit: "false", npm_config_fund: "false" },
    async publish(name, version, files = {}, manifest = {}) {
      const work = join(root, "src", `${name}@${version}`);
      const pkgDir = join(work, "package");
      for (const [rel, text] of Object.entries({ ...files, "package.json": JSON.stringify({ ...manifest, name, version }) })) {
        mkdirSync(dirname(join(pkgDir, rel)), { recursive: true });
        writeFileSync(join(pkgDir, rel), text);
      }
      const file = join(work, "package.tgz");
      const tar = Bun.spawn(["tar", "-czf", file, "-C", work, "package"], { stdout: "ignore", stderr: "pipe" });
      if ((await tar.exited) !== 0) throw new Error(`tar failed: ${await new Response(tar.stderr).text()}`);
      const bytes = readFileSync(file);
      const tarPath = `${name}/-/${name.replace(/^@[^/]+\//, "")}-${version}.tgz`;
      tarballs.set(tarPath, bytes);
      const entry = packages.get(name) ?? { latest: version, versions: {} };
      entry.versions[version] = {
        name,
        version,
        dist: {
          tarball: `${url}${tarPath}`,
          shasum: createHash("sha1").update(bytes).digest("hex"),
          integrity: `sha512-${createHash("sha512").update(bytes).digest("base64")}`,
        },
      };
      entry.latest = version;
      packages.set(name, entry);
    },
    stop: () => server.stop(true),
  };
}
