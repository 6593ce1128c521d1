// @memgate/client: the TypeScript client of the memgate gateway. The contract it implements
// (metadata, idempotency, retries, errors) is docs/CLIENTS.md.
export { GatewayClient, newKey, writeItem } from "./client.js";
export type { LayerName, RecallOptions, Waiting, WriteInput, WriteOptions } from "./client.js";
export { AGENT_HEADER, KEY_HEADER, parseTargets } from "./transport.js";
export type { ClientOptions, TlsOptions } from "./transport.js";
export { RetryPolicy } from "./retry.js";
export type { RetryOptions } from "./retry.js";
export * from "./errors.js";
export * as pb from "./gen/memgate/v1/memgate_pb.js";
