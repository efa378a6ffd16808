/** build.ts's embedded documentation: repository-relative path → its embedded file's path (see package-files.ts). */
declare module "pion-docs:files" {
  const files: Record<string, string>;
  export default files;
}
