import fs from "node:fs";
import { log } from "../../util/log.ts";
import WASM_PATH from "@silvia-odwyer/photon-node/photon_rs_bg.wasm" with { type: "file" };

export type Photon = typeof import("@silvia-odwyer/photon-node");

const WASM_FILE = /[\\/]photon_rs_bg\.wasm$/;
let loading: Promise<Photon | null> | undefined;

/**
 * photon, loaded on the first image that needs decoding (tens of ms: 1.9 MB of WebAssembly to
 * compile), never at start-up. Null when it cannot load, which callers treat as "cannot process".
 *
 * photon-node's entry reads its WebAssembly with `fs.readFileSync(__dirname + "/photon_rs_bg.wasm")`
 * while it is evaluated. In the compiled binary that `__dirname` is the build machine's
 * node_modules folder, so the file is embedded (`with { type: "file" }`) and, for the duration of
 * the import only, a read of that one file name is answered with the embedded bytes.
 */
export function loadPhoton(): Promise<Photon | null> {
  loading ??= (async () => {
    const bytes = await Bun.file(WASM_PATH).bytes();
    const readFileSync = fs.readFileSync;
    fs.readFileSync = ((file: fs.PathOrFileDescriptor, options?: unknown) =>
      typeof file === "string" && WASM_FILE.test(file) ? Buffer.from(bytes) : readFileSync(file, options as never)) as typeof fs.readFileSync;
    try {
      return (await import("./photon-sdk.ts")).photon as Photon;
    } finally {
      fs.readFileSync = readFileSync;
    }
  })().catch((err: unknown) => {
    log("images", `the image codec (photon) failed to load: ${err instanceof Error ? err.message : String(err)}`);
    return null;
  });
  return loading;
}
