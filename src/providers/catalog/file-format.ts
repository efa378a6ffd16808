import type { CatalogData, CatalogProvider } from "./data.ts";

/**
 * The catalog on disk (embedded and cached): a header line, then one provider per line.
 * The header maps each provider id to the byte range of its line, so a process that uses
 * one provider parses only that line (the whole catalog is ~1 MB of JSON: ~10 ms and ~8 MB
 * to parse, more than pion's whole start-up).
 */
export interface CatalogHeader {
  source: string;
  date: string;
  /** id -> [start, end) byte offsets counted from the end of the header line. */
  providers: Record<string, [number, number]>;
  /** id -> the environment variables that may hold its key: choosing a provider by key reads no model data. */
  env: Record<string, string[]>;
}

export function encodeCatalog(data: CatalogData): string {
  const lines = data.providers.map((p) => JSON.stringify(p));
  const ranges: Record<string, [number, number]> = {};
  const env: Record<string, string[]> = {};
  let at = 0;
  data.providers.forEach((p, i) => {
    const len = Buffer.byteLength(lines[i]!);
    ranges[p.id] = [at, at + len];
    env[p.id] = p.env;
    at += len + 1;
  });
  const header: CatalogHeader = { source: data.source, date: data.date, providers: ranges, env };
  return `${JSON.stringify(header)}\n${lines.map((l) => `${l}\n`).join("")}`;
}

/** A catalog file's bytes, read once; providers are parsed on first use and kept. */
export class CatalogFile {
  readonly header: CatalogHeader;
  private readonly body: number;
  private readonly parsed = new Map<string, CatalogProvider>();

  constructor(
    private readonly bytes: Buffer,
    readonly path: string,
  ) {
    const nl = bytes.indexOf(10);
    if (nl < 0) throw new Error(`${path}: not a catalog file (no header line)`);
    this.header = JSON.parse(bytes.toString("utf8", 0, nl)) as CatalogHeader;
    if (typeof this.header?.providers !== "object" || typeof this.header.env !== "object") throw new Error(`${path}: not a catalog file (bad header)`);
    this.body = nl + 1;
  }

  ids(): string[] {
    return Object.keys(this.header.providers);
  }

  provider(id: string): CatalogProvider | undefined {
    const hit = this.parsed.get(id);
    if (hit) return hit;
    const range = Object.hasOwn(this.header.providers, id) ? this.header.providers[id] : undefined;
    if (!range) return undefined;
    const p = JSON.parse(this.bytes.toString("utf8", this.body + range[0], this.body + range[1])) as CatalogProvider;
    this.parsed.set(id, p);
    return p;
  }

  all(): CatalogProvider[] {
    return this.ids().map((id) => this.provider(id)!);
  }
}
