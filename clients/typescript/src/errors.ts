// The client's typed errors: one class per gRPC status the gateway answers with (the same
// mapping as the Python client's gateway/client/errors.py; docs/CLIENTS.md "Errors").
import { Code, ConnectError } from "@connectrpc/connect";

/** Trailing metadata the gateway sends with RESOURCE_EXHAUSTED: ms to wait before retrying. */
export const RETRY_AFTER_HEADER = "retry-after-ms";

/** A call the gateway refused or could not serve; `code` is the gRPC status (a number). */
export class GatewayError extends Error {
  readonly code: Code;
  constructor(message: string, code: Code = Code.Unknown, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}
export class InvalidArgument extends GatewayError {}
export class NotFound extends GatewayError {}
export class PermissionDenied extends GatewayError {}
export class Unauthenticated extends GatewayError {}
/** ABORTED or ALREADY_EXISTS. */
export class Conflict extends GatewayError {}
export class FailedPrecondition extends GatewayError {}
/** UNAVAILABLE or DEADLINE_EXCEEDED: safe to retry with the same idempotency key. */
export class Unavailable extends GatewayError {}
/** RESOURCE_EXHAUSTED: the gateway refused the call before doing anything; retry after
 * `retryAfterMs` (0 when the gateway sent no hint). */
export class Overloaded extends GatewayError {
  retryAfterMs = 0;
}
export class Unimplemented extends GatewayError {}

const BY_CODE: Partial<Record<Code, new (m: string, c: Code, o?: { cause?: unknown }) => GatewayError>> = {
  [Code.InvalidArgument]: InvalidArgument,
  [Code.OutOfRange]: InvalidArgument,
  [Code.NotFound]: NotFound,
  [Code.PermissionDenied]: PermissionDenied,
  [Code.Unauthenticated]: Unauthenticated,
  [Code.Aborted]: Conflict,
  [Code.AlreadyExists]: Conflict,
  [Code.FailedPrecondition]: FailedPrecondition,
  [Code.Unavailable]: Unavailable,
  [Code.DeadlineExceeded]: Unavailable,
  [Code.ResourceExhausted]: Overloaded,
  [Code.Unimplemented]: Unimplemented,
};

/** The typed error for anything a call threw. */
export function typed(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  const ce = ConnectError.from(err);
  const cls = BY_CODE[ce.code] ?? GatewayError;
  const error = new cls(ce.rawMessage || Code[ce.code], ce.code, { cause: err });
  if (error instanceof Overloaded) {
    const hint = Number.parseInt(ce.metadata.get(RETRY_AFTER_HEADER) ?? "", 10);
    if (Number.isFinite(hint) && hint > 0) error.retryAfterMs = hint;
  }
  return error;
}
