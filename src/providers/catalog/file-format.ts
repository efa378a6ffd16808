import type { CatalogData, CatalogProvider } from "./data.ts";

/**
 * The catalog on disk (embedded and cached): a JSON header line, then one provider per line,
 * its JSON deflated and base64-encoded. The header maps each provider id to the byte range of
 * its line, so a process that uses one provider decodes only that line. The whole catalog is
 * ~1.1 MB of JSON (~10 ms and ~8 MB to parse, more than pion's whole start-up); compressed it
 * is ~220 KB, which keeps the binary, and the pages of it a start-up maps, small.
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
  const lines = data.providers.map((p) => Buffer.from(Bun.deflateSync(Buffer.from(JSON.stringify(p)), { level: 9 })).toString("base64"));
  const ranges: Record<string, [number, number]> = {};
  const env: Record<string, string[]> = {};
  let at = 0;
  data.providers.forEach((p, i) => {
    const len = lines[i]!.length; // base64: one byte per character
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
    const line = Buffer.from(this.bytes.toString("latin1", this.body + range[0], this.body + range[1]), "base64");
    const p = JSON.parse(Buffer.from(Bun.inflateSync(line)).toString("utf8")) as CatalogProvider;
    this.parsed.set(id, p);
    return p;
  }

  all(): CatalogProvider[] {
    return this.ids().map((id) => this.provider(id)!);
  }
}
