/**
 * Where the code of a thread pion starts comes from. In the binary, the worker's module bundled
 * by build.ts into a string (PION_WORKERS): a compiled binary would otherwise resolve a worker
 * path it does not embed against the working directory, a folder pion must not run code from.
 * From source, pion's own file.
 */
declare const PION_WORKERS: Record<string, string> | undefined;
const urls = new Map<string, string>();

/** A URL to start worker `name` (build.ts's WORKERS) from; `file` is its module, for source runs. */
export function workerUrl(name: string, file: URL): string {
  let url = urls.get(name);
  if (url === undefined) {
    if (typeof PION_WORKERS === "object") {
      const code = PION_WORKERS[name];
      if (code === undefined) throw new Error(`worker ${name} is not built into this binary`);
      url = URL.createObjectURL(new Blob([code], { type: "application/javascript" }));
    } else url = file.href;
    urls.set(name, url);
  }
  return url;
}
