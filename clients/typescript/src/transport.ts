// The connection side of the client: one HTTP/2 session per gateway speaking the gRPC protocol
// (@connectrpc/connect-node), the caller's identity as metadata, the per-attempt deadline,
// round robin over several gateways and the retry loop.
import { Code, createClient, type CallOptions, type Client } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import type { SecureClientSessionOptions } from "node:http2";
import { setTimeout as sleep } from "node:timers/promises";
import { typed, Unavailable } from "./errors.js";
import { RetryPolicy, type RetryOptions } from "./retry.js";
import { MemoryGateway } from "./gen/memgate/v1/memgate_pb.js";

/** Metadata keys the gateway reads (docs/CLIENTS.md "Metadata"). */
export const AGENT_HEADER = "x-agent-id";
export const KEY_HEADER = "x-api-key";

export interface TlsOptions {
  /** PEM of the CA that signed the gateway's certificate (default: the system's roots). */
  ca?: string | Buffer;
  /** mTLS: the client's certificate chain and private key (PEM), both or neither. */
  cert?: string | Buffer;
  key?: string | Buffer;
  /** The name checked against the server certificate, instead of the target's host. */
  serverName?: string;
}

export interface ClientOptions extends RetryOptions {
  /** One gateway ("127.0.0.1:50051") or several (an array, or "host:port,host:port"): calls go
   * round robin over them and a call that finds one unavailable is retried on the next. */
  target: string | string[];
  /** The calling agent (x-agent-id). May be "" with a gateway that takes it from the client
   * certificate (tls_agent_from_cert). */
  agentId: string;
  /** The agent's key (x-api-key), when the gateway has keys configured. */
  apiKey?: string;
  /** Deadline of each attempt, ms (default 30000). */
  timeoutMs?: number;
  /** TLS: true for the system's roots, or the CA / client certificate to use. Default plaintext. */
  tls?: boolean | TlsOptions;
  /** Told about every retry before its wait (logging, metrics). */
  onRetry?: (event: { method: string; attempt: number; delayMs: number; error: Error }) => void;
}

export type Stub = Client<typeof MemoryGateway>;

export function parseTargets(target: string | string[]): string[] {
  const parts = (Array.isArray(target) ? target : target.split(",")).map((p) => p.trim());
  if (parts.length === 0 || parts.some((p) => !p)) {
    throw new Error("target: name at least one gateway, e.g. '127.0.0.1:50051'");
  }
  for (const p of parts) {
    if (!/^(\[[0-9a-fA-F:.]+\]|[^:/\s]+):\d+$/.test(p)) {
      throw new Error(`target ${JSON.stringify(p)}: write it host:port (IPv6 as [addr]:port)`);
    }
  }
  return parts;
}

function sessionOptions(tls: ClientOptions["tls"]): SecureClientSessionOptions | undefined {
  if (!tls) return undefined;
  const o: TlsOptions = tls === true ? {} : tls;
  if (Boolean(o.cert) !== Boolean(o.key)) throw new Error("tls: cert and key go together (mTLS)");
  const out: SecureClientSessionOptions = {};
  if (o.ca) out.ca = o.ca;
  if (o.cert) out.cert = o.cert;
  if (o.key) out.key = o.key;
  if (o.serverName) out.servername = o.serverName;
  return out;
}

export class Transport {
  readonly agentId: string;
  private readonly headers: Record<string, string> = {};
  private readonly timeoutMs: number;
  private readonly policy: RetryPolicy;
  private readonly sessions: Http2SessionManager[] = [];
  private readonly stubs: Stub[] = [];
  private readonly onRetry: ClientOptions["onRetry"];
  private next = 0;

  constructor(options: ClientOptions) {
    const targets = parseTargets(options.target);
    this.agentId = options.agentId;
    if (options.agentId) this.headers[AGENT_HEADER] = options.agentId;
    if (options.apiKey) this.headers[KEY_HEADER] = options.apiKey;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.policy = new RetryPolicy(options, targets.length);
    this.onRetry = options.onRetry;
    const nodeOptions = sessionOptions(options.tls);
    const scheme = options.tls ? "https" : "http";
    for (const target of targets) {
      const baseUrl = `${scheme}://${target}`;
      const sessionManager = new Http2SessionManager(baseUrl, {}, nodeOptions);
      this.sessions.push(sessionManager);
      const transport = createGrpcTransport({ baseUrl, sessionManager });
      this.stubs.push(createClient(MemoryGateway, transport));
    }
  }

  /** The stub of the next gateway (round robin). */
  private pick(): Stub {
    const stub = this.stubs[this.next % this.stubs.length];
    this.next = (this.next + 1) % this.stubs.length;
    return stub;
  }

  /** Sends `send` with the identity and deadline; retries by the policy (the same request
   * object each time, so a write keeps its idempotency key); throws a typed GatewayError. */
  async run<T>(
    method: string,
    send: (stub: Stub, options: CallOptions) => Promise<T>,
    signal?: AbortSignal,
    retryable = true,
  ): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await send(this.pick(), { headers: this.headers, timeoutMs: this.timeoutMs, signal });
      } catch (err) {
        let error = typed(err);
        if (signal?.aborted) throw error;
        if (error.code === Code.Canceled) {
          // Connect reports a connection lost mid-call as CANCELED; the caller did not cancel,
          // so it is what gRPC calls UNAVAILABLE (the gateway may have served it: same key again)
          error = new Unavailable(`connection lost: ${error.message}`, Code.Unavailable, { cause: err });
        }
        const delay = this.policy.afterFailure(error, attempt, retryable);
        if (typeof delay !== "number") throw delay;
        this.onRetry?.({ method, attempt, delayMs: delay, error });
        if (delay > 0) await sleep(delay, undefined, { signal }).catch(() => {
          throw error;
        });
      }
    }
  }

  /** A stream (Export): sent once, not retried. */
  stream(): { stub: Stub; options: CallOptions } {
    return { stub: this.pick(), options: { headers: this.headers } };
  }

  /** Closes every HTTP/2 session. */
  close(): void {
    for (const s of this.sessions) s.abort();
  }
}
