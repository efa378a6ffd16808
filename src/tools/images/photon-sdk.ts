/**
 * photon (Rust image codecs compiled to WebAssembly), in one module that photon.ts imports on first
 * use. photon-node is CommonJS; imported dynamically on its own, Bun's bundler (1.4.5, minify +
 * splitting) can break its interop in the compiled binary ("m is not a function"), as
 * src/providers/bedrock-sdk.ts explains. A static re-export keeps that interop at module level.
 */
export * as photon from "@silvia-odwyer/photon-node";
