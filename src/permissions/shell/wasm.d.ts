// The parser's WebAssembly files are imported `with { type: "file" }`: their path (in the binary's $bunfs when compiled).
declare module "*.wasm" {
  const path: string;
  export default path;
}
