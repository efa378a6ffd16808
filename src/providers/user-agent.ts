import { VERSION } from "../config.ts";

/** The detailed `User-Agent` pi's clients send: `pi/<version> (<platform>; <runtime>; <arch>)`. */
export function detailedUserAgent(version: string = VERSION): string {
  const runtime = process.versions.bun ? `bun/${process.versions.bun}` : `node/${process.version}`;
  return `pi/${version} (${process.platform}; ${runtime}; ${process.arch})`;
}
