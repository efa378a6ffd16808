// The embedded catalog is imported `with { type: "file" }`: its path (in the binary's $bunfs when compiled).
declare module "*.jsonl" {
  const path: string;
  export default path;
}
