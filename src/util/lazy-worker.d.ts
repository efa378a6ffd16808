/** The embedded path of a worker's file that build.ts bundles apart (see lazyWorkerUrl). */
declare module "pion-worker:codemode" {
  const path: string;
  export default path;
}
