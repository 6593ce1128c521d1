// When a failed call goes again (docs/CLIENTS.md "Retries"), as the Python client's
// RetryPolicy (gateway/client/api.py): the same request is sent again, so a write keeps its
// idempotency key and is stored once.
import { GatewayError, Overloaded, Unavailable } from "./errors.js";

export interface RetryOptions {
  /** UNAVAILABLE / DEADLINE_EXCEEDED retries; 0 turns every retry off (default 3). */
  retries?: number;
  /** First back-off, doubled per attempt up to `capMs` (default 200 / 2000). */
  baseMs?: number;
  capMs?: number;
  /** RESOURCE_EXHAUSTED retries after the gateway's retry-after-ms, each wait at most
   * `overloadCapMs` (default 8 / 5000). */
  overloadRetries?: number;
  overloadCapMs?: number;
}

export class RetryPolicy {
  readonly retries: number;
  readonly baseMs: number;
  readonly capMs: number;
  readonly overloadRetries: number;
  readonly overloadCapMs: number;

  constructor(options: RetryOptions = {}, readonly replicas = 1, private readonly random = Math.random) {
    this.retries = options.retries ?? 3;
    this.baseMs = options.baseMs ?? 200;
    this.capMs = options.capMs ?? 2000;
    this.overloadRetries = options.overloadRetries ?? 8;
    this.overloadCapMs = options.overloadCapMs ?? 5000;
  }

  /** Milliseconds to wait before attempt `attempt + 1` (attempts count from 0), or the error
   * itself when the call must not (or may no longer) be retried. */
  afterFailure(error: GatewayError, attempt: number, retryable = true): number | GatewayError {
    if (!retryable) return error;
    const overloadBudget = this.retries ? this.overloadRetries : 0;
    if (error instanceof Overloaded && attempt < overloadBudget) {
      const hint = error.retryAfterMs || this.baseMs;
      const jitter = this.random() * (Math.min(hint, this.baseMs) / 2); // a burst does not come back as one
      return Math.min(hint + jitter, this.overloadCapMs);
    }
    if (!(error instanceof Unavailable) || attempt >= this.retries) return error;
    // several gateways: the first retries go at once, round robin sends them to the next one
    if (this.replicas > 1 && attempt < this.replicas - 1) return 0;
    const backoff = Math.min(this.baseMs * 2 ** attempt, this.capMs);
    return backoff / 2 + this.random() * (backoff / 2);
  }
}
