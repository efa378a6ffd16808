/**
 * Repository-relative path → where to read each shipped file (package-files.ts). This module is
 * what runs from source: the repository's own files. In dist/pion, build.ts's packageDocsPlugin
 * replaces it with one whose paths are the files embedded in the binary. Required only when an
 * extension first asks for the package's paths.
 */
import { join } from "node:path";
import { listPackageFiles } from "./package-files.ts";

const root = join(import.meta.dir, "..", "..", "..");
const files: Record<string, string> = Object.fromEntries(listPackageFiles(root).map((rel) => [rel, join(root, rel)]));
export default files;
