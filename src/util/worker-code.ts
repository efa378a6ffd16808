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

/**
 * The URL of a worker build.ts embeds as a file of its own (`pion-worker:<name>` names its path;
 * read only now) in the binary; from source, its own module.
 */
export async function lazyWorkerUrl(name: "codemode", file: URL): Promise<string> {
  let url = urls.get(name);
  if (url === undefined) {
    if (typeof PION_WORKERS === "object") {
      const { default: path } = await import("pion-worker:codemode");
      url = URL.createObjectURL(new Blob([await Bun.file(path).text()], { type: "application/javascript" }));
    } else url = file.href;
    urls.set(name, url);
  }
  return url;
}
