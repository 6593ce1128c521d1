// The retry rules and the error mapping of docs/CLIENTS.md, without a gateway.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import * as e from "../src/errors.js";
import { RetryPolicy } from "../src/retry.js";

const err = (code: Code, trailer: Record<string, string> = {}) => e.typed(new ConnectError("test", code, trailer));

test("each gRPC status maps to its typed error", () => {
  const cases: [Code, new (...a: never[]) => e.GatewayError][] = [
    [Code.InvalidArgument, e.InvalidArgument],
    [Code.OutOfRange, e.InvalidArgument],
    [Code.NotFound, e.NotFound],
    [Code.PermissionDenied, e.PermissionDenied],
    [Code.Unauthenticated, e.Unauthenticated],
    [Code.Aborted, e.Conflict],
    [Code.AlreadyExists, e.Conflict],
    [Code.FailedPrecondition, e.FailedPrecondition],
    [Code.Unavailable, e.Unavailable],
    [Code.DeadlineExceeded, e.Unavailable],
    [Code.ResourceExhausted, e.Overloaded],
    [Code.Unimplemented, e.Unimplemented],
  ];
  for (const [code, cls] of cases) {
    const x = err(code);
    assert.ok(x instanceof cls, `${Code[code]} -> ${x.name}`);
    assert.equal(x.code, code);
  }
  const internal = err(Code.Internal);
  assert.equal(internal.constructor, e.GatewayError);
  assert.equal((err(Code.ResourceExhausted, { "retry-after-ms": "250" }) as e.Overloaded).retryAfterMs, 250);
});

test("overload waits the hint plus a bounded jitter, within its own budget", () => {
  for (const r of [0, 0.999]) {
    const p = new RetryPolicy({}, 1, () => r);
    const over = err(Code.ResourceExhausted, { "retry-after-ms": "300" });
    for (let attempt = 0; attempt < 8; attempt++) {
      const d = p.afterFailure(over, attempt);
      assert.equal(typeof d, "number");
      assert.ok((d as number) >= 300 && (d as number) <= 400, `attempt ${attempt}: ${d}`);
    }
    assert.equal(p.afterFailure(over, 8), over);
    assert.equal(p.afterFailure(err(Code.ResourceExhausted, { "retry-after-ms": "60000" }), 0), 5000);
  }
  const off = new RetryPolicy({ retries: 0 });
  const over = err(Code.ResourceExhausted);
  assert.equal(off.afterFailure(over, 0), over);
});

test("unavailable backs off exponentially with jitter; several gateways retry at once", () => {
  const down = err(Code.Unavailable);
  for (const r of [0, 0.999]) {
    const p = new RetryPolicy({}, 1, () => r);
    [200, 400, 800].forEach((d, attempt) => {
      const wait = p.afterFailure(down, attempt) as number;
      assert.ok(wait >= d / 2 && wait <= d, `attempt ${attempt}: ${wait}`);
    });
    assert.equal(p.afterFailure(down, 3), down);
  }
  const several = new RetryPolicy({}, 3);
  assert.equal(several.afterFailure(down, 0), 0);
  assert.equal(several.afterFailure(down, 1), 0);
  assert.ok((several.afterFailure(down, 2) as number) > 0);
  const bad = err(Code.InvalidArgument);
  assert.equal(several.afterFailure(bad, 0), bad);
});
