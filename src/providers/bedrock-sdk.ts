/**
 * The AWS SDK pieces the Bedrock adapter needs, in one module that bedrock.ts imports on its first
 * request. `@smithy/node-http-handler` is CommonJS; imported dynamically on its own, Bun's bundler
 * (1.4.5, minify + splitting) wraps it as `.then((m) => m(m.default, 1))` with its interop helper
 * renamed to the arrow's own parameter, and the compiled binary fails with "m is not a function".
 * A static import here keeps that interop at module level.
 */
export { BedrockRuntimeClient, ConverseStreamCommand } from "@aws-sdk/client-bedrock-runtime";
export { NodeHttpHandler } from "@smithy/node-http-handler";
