/**
 * The release: `dist/release/pion-<version>-<target>[.exe]` for every target in
 * scripts/binary-format.ts, each compiled by build.ts's `compilePion` (so each embeds what the host
 * binary embeds), its header checked against its target, then `SHA256SUMS` (sha256sum's format),
 * the wire schemas and scripts/install.sh beside them. Run as `bun run build --release`, or
 * `bun release.ts [targets...]` for some.
 */
import { mkdtempSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pkg from "./package.json" with { type: "json" };
import { compilePion, prepareEmbeds } from "./build.ts";
import { checkBinaryFormat, TARGETS } from "./scripts/binary-format.ts";

export const RELEASE_DIR = "dist/release";

export const releaseName = (target: string): string =>
  `pion-${pkg.version}-${target}${TARGETS[target]?.exe ? ".exe" : ""}`;

/** Builds `targets` (default: all) into a fresh dist/release; exits non-zero on a failed build or a wrong header. */
export async function buildRelease(targets: string[] = Object.keys(TARGETS)): Promise<void> {
  for (const t of targets) if (!TARGETS[t]) throw new Error(`unknown target ${t}; known: ${Object.keys(TARGETS).join(", ")}`);
  const embeds = await prepareEmbeds();
  rmSync(RELEASE_DIR, { recursive: true, force: true });
  await Bun.$`mkdir -p ${RELEASE_DIR} && cp -r schemas ${RELEASE_DIR}/schemas && cp scripts/install.sh ${RELEASE_DIR}/install.sh`;
  const sums: string[] = [];
  for (const target of targets) {
    const started = performance.now();
    // Staged apart: a compile with a linked source map writes its maps beside the binary.
    const stage = mkdtempSync(join(tmpdir(), `pion-release-${target}-`));
    try {
      const staged = join(stage, "pion");
      await compilePion(embeds, staged, target);
      const name = releaseName(target);
      const built = join(stage, name.endsWith(".exe") ? "pion.exe" : "pion");
      checkBinaryFormat(await Bun.file(built).slice(0, 1 << 16).bytes(), target);
      renameSync(built, join(RELEASE_DIR, name));
      const hash = new Bun.CryptoHasher("sha256").update(await Bun.file(join(RELEASE_DIR, name)).bytes()).digest("hex");
      sums.push(`${hash}  ${name}`);
      const mb = (Bun.file(join(RELEASE_DIR, name)).size / 1e6).toFixed(1);
      console.error(`built ${RELEASE_DIR}/${name} (${mb} MB, ${Math.round(performance.now() - started)} ms)`);
    } finally {
      rmSync(stage, { recursive: true, force: true });
    }
  }
  await Bun.write(join(RELEASE_DIR, "SHA256SUMS"), `${sums.join("\n")}\n`);
  console.error(`release ${pkg.version}+${embeds.commit}: ${targets.length} binaries, ${RELEASE_DIR}/SHA256SUMS`);
}

if (import.meta.main) {
  const picked = process.argv.slice(2).filter((a) => !a.startsWith("--"));
  await buildRelease(picked.length > 0 ? picked : undefined).catch((err: unknown) => {
    console.error(`release: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}
