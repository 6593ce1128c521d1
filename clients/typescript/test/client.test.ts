// The TypeScript client against live gateways (no mocks): remember and recall, idempotent
// writes, working memory, events, overload waits, proposals, API keys, TLS/mTLS, several
// targets and deadlines.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { Code } from "@connectrpc/connect";
import {
  GatewayClient,
  GatewayError,
  Overloaded,
  PermissionDenied,
  Unauthenticated,
  Unavailable,
  pb,
  type ClientOptions,
} from "../src/index.js";
import { startGateways, type LiveGateways } from "./live-gateway.js";
import { startLossyProxy } from "./lossy-proxy.js";

let gw: LiveGateways;
const clients: GatewayClient[] = [];

function client(agentId: string, o: Partial<ClientOptions> = {}): GatewayClient {
  const c = new GatewayClient({ target: gw.plain, agentId, apiKey: gw.keys[agentId], ...o });
  clients.push(c);
  return c;
}
const userNs = () => `user/u-${randomUUID().slice(0, 8)}`;

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

describe("GatewayClient against a live gateway", () => {
  before(async () => {
    gw = await startGateways();
  });
  after(async () => {
    for (const c of clients) c.close();
    await gw?.stop();
  });

  test("remembers and recalls, reads, versions and forgets", async () => {
    const m = client("master");
    const ns = userNs();
    const id = await m.write(ns, "semantic", "The user is allergic to peanuts", { wait: true, type: "fact" });
    assert.ok(id);
    const r = await m.recall("peanut allergy", [ns]);
    assert.deepEqual(r.hits.map((h) => h.memory?.id), [id]);
    assert.match(r.memoryBlock, /allergic to peanuts/);
    const got = await m.get(id);
    assert.equal(got.content, "The user is allergic to peanuts");
    assert.equal(got.sourceAgent, "master");
    assert.equal((await m.history(id)).length, 1);
    const exported: string[] = [];
    for await (const e of m.export([ns])) exported.push(e.versions.at(-1)?.content ?? "");
    assert.deepEqual(exported, ["The user is allergic to peanuts"]);
    const tomb = await m.forget(id, "test");
    assert.equal(tomb.status, pb.MemoryStatus.FORGOTTEN);
    assert.deepEqual((await m.recall("peanut allergy", [ns])).hits, []);
  });

  test("a retried write (same idempotency key) is stored once", async () => {
    const m = client("master");
    const ns = userNs();
    const key = `k-${randomUUID()}`;
    const first = await m.writeResult(ns, "semantic", "The user lives in Hamburg", { wait: true, idempotencyKey: key });
    const again = await m.writeResult(ns, "semantic", "The user lives in Hamburg", { wait: true, idempotencyKey: key });
    assert.equal(first.duplicate, false);
    assert.equal(again.duplicate, true);
    assert.equal(again.id, first.id);
    const hits = (await m.recall("where does the user live", [ns])).hits;
    assert.deepEqual(hits.map((h) => h.memory?.id), [first.id]);
    // batch writes get a key per item, and the batch is all-or-nothing
    const results = await m.batchWrite(
      [
        { namespace: ns, layer: "semantic", content: "The user drinks green tea" },
        { namespace: ns, layer: "episodic", content: "The user booked a flight to Oslo" },
      ],
      { wait: true },
    );
    assert.equal(results.length, 2);
    assert.ok(results.every((x) => x.id && !x.duplicate));
  });

  test("a write whose answer was lost is retried with its key and stored once", async () => {
    const content = `The user's passport expires in March ${randomUUID().slice(0, 8)}`;
    const proxy = await startLossyProxy(gw.plain, Buffer.from(content), 2000);
    try {
      const retried: Error[] = [];
      const c = client("master", { target: proxy.address, retries: 6, baseMs: 50, capMs: 500, onRetry: (r) => retried.push(r.error) });
      const ns = userNs();
      const w = await c.writeResult(ns, "semantic", content, { wait: true });
      assert.ok(proxy.fired(), "the proxy should have lost the first answer");
      assert.ok(retried.length > 0 && retried[0] instanceof Unavailable, `retries: ${retried}`);
      // the gateway had stored the first attempt: the retry (same key) was answered by it
      assert.equal(w.duplicate, true);
      assert.ok(w.id);
      const hits = (await client("master").recall("when does the passport expire", [ns])).hits;
      assert.deepEqual(hits.map((h) => h.memory?.id), [w.id]);
    } finally {
      await proxy.close();
    }
  });

  test("working memory: turns, an idempotent append, the window, ending the session", async () => {
    const m = client("master");
    const ns = userNs();
    const session = `s-${randomUUID().slice(0, 8)}`;
    const t1 = await m.appendTurn(ns, session, { role: "user", content: "I moved to Berlin last week", idempotencyKey: "turn-1" });
    const dup = await m.appendTurn(ns, session, { role: "user", content: "I moved to Berlin last week", idempotencyKey: "turn-1" });
    assert.equal(dup.duplicate, true);
    assert.equal(dup.id, t1.id);
    await m.appendTurn(ns, session, { role: "assistant", content: "Noted, Berlin it is." });
    const w = await m.window(ns, session);
    assert.deepEqual(w.turns.map((t) => t.role), ["user", "assistant"]);
    const end = await m.endSession(ns, session, { wait: true });
    assert.equal(end.turns, 2);
    assert.equal(end.applied, true);
  });

  test("events go on the namespace's timeline", async () => {
    const m = client("master");
    const ns = userNs();
    const a = await m.recordEvent(ns, "Kick-off meeting with ACME", { eventTime: new Date("2026-01-05T10:00:00Z"), wait: true });
    const b = await m.recordEvent(ns, "Contract signed with ACME", { eventTime: new Date("2026-01-20T10:00:00Z"), wait: true });
    const events = await m.timeline(ns);
    assert.deepEqual(events.map((e) => e.id), [a, b]);
    const january = await m.timeline(ns, { start: new Date("2026-01-10T00:00:00Z") });
    assert.deepEqual(january.map((e) => e.id), [b]);
  });

  test("an overloaded burst waits the gateway's retry-after-ms and succeeds", async () => {
    const ns = userNs();
    await client("master").write(ns, "semantic", "The user likes jazz", { wait: true });
    // without retries a burst meets the per-agent bound: RESOURCE_EXHAUSTED with the hint
    // (bursts until one did: how many calls overlap depends on the scheduling)
    const strict = client("burst", { retries: 0 });
    const refused: unknown[] = [];
    for (let round = 0; round < 10 && refused.length === 0; round++) {
      const settled = await Promise.allSettled(Array.from({ length: 30 }, (_, i) => strict.recall(`music ${round} ${i}`, [ns])));
      for (const s of settled) if (s.status === "rejected") refused.push(s.reason);
    }
    assert.ok(refused.length > 0, "a burst should exceed the per-agent bound");
    for (const e of refused) {
      assert.ok(e instanceof Overloaded, String(e));
      assert.equal(e.code, Code.ResourceExhausted);
      assert.ok(e.retryAfterMs >= gw.retry_after_ms, `retryAfterMs ${e.retryAfterMs}`);
    }
    // with the default policy every call of a burst waits its turn and answers (new queries:
    // the gateway's recall cache would answer repeated ones before they queue)
    const waits: number[] = [];
    const patient = client("burst", { onRetry: (r) => r.error instanceof Overloaded && waits.push(r.delayMs) });
    for (let round = 0; round < 10 && waits.length === 0; round++) {
      const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => patient.recall(`which music ${round} ${i}`, [ns])));
      assert.deepEqual(answers.map((a) => a.hits.length), Array(30).fill(1));
    }
    assert.ok(waits.length > 0, "some calls should have been refused and retried");
    assert.ok(waits.every((ms) => ms >= gw.retry_after_ms), `waits ${waits}`);
  });

  test("a sub-agent's shared write becomes a proposal the master approves", async () => {
    const sub = client("sub-a");
    const m = client("master");
    const ns = userNs();
    const w = await sub.writeResult(ns, "semantic", "The user prefers morning meetings");
    assert.ok(w.proposalId);
    assert.equal(w.id, "");
    await assert.rejects(sub.approve(w.proposalId), PermissionDenied);
    const pending = (await m.proposals()).filter((p) => p.item?.namespace === ns);
    assert.deepEqual(pending.map((p) => p.id), [w.proposalId]);
    assert.equal(pending[0].proposer, "sub-a");
    const approved = await m.approve(w.proposalId, "confirmed in chat");
    assert.equal(approved.state, "approved");
    const mem = await m.get(approved.memoryId);
    assert.equal(mem.content, "The user prefers morning meetings");
    assert.equal(mem.sourceAgent, "sub-a");
    // a result's shared update is proposed too; its own namespace's update is written
    const task = `t-${randomUUID().slice(0, 8)}`;
    const res = await sub.submitResult(task, {
      status: "done",
      summary: "Compared vendors",
      memoryUpdates: [
        { namespace: "agent/sub-a", layer: "semantic", content: "Vendor B has an EU region" },
        { namespace: ns, layer: "semantic", content: "The user's company uses Salesforce" },
      ],
    });
    assert.equal(res.committed.length, 1);
    assert.equal(res.proposals.length, 1);
    const rejected = await m.reject(res.proposals[0].id, "unverified");
    assert.equal(rejected.state, "rejected");
    const fact = await m.proposeFact(ns, "The user's cat is called Mia", { sessionId: "s1", explicit: true });
    assert.equal(fact.promoted, true);
  });

  test("API keys: a wrong key is refused, not retried", async () => {
    let retried = 0;
    const bad = client("master", { apiKey: "wrong", onRetry: () => retried++ });
    await assert.rejects(bad.recall("x", ["global"]), (e: unknown) => e instanceof Unauthenticated && e.code === Code.Unauthenticated);
    assert.equal(retried, 0);
  });

  test("mTLS: the client certificate is the agent; no certificate, no call", async () => {
    const tls = { ca: readFileSync(gw.ca), cert: readFileSync(gw.client_cert), key: readFileSync(gw.client_key) };
    const c = client("", { target: gw.mtls, apiKey: undefined, tls });
    const ns = `agent/${gw.tls_agent}`;
    const id = await c.write(ns, "semantic", "TLS agents remember too", { wait: true });
    assert.equal((await c.get(id)).sourceAgent, gw.tls_agent);
    assert.deepEqual((await c.recall("remember", [ns])).hits.map((h) => h.memory?.id), [id]);
    const noCert = client("", { target: gw.mtls, apiKey: undefined, tls: { ca: tls.ca }, retries: 0 });
    await assert.rejects(noCert.get(id), GatewayError);
    const plainToTls = client(gw.tls_agent, { target: gw.mtls, apiKey: undefined, retries: 0, timeoutMs: 3000 });
    await assert.rejects(plainToTls.get(id), GatewayError);
  });

  test("several targets: an unreachable one is skipped at once (round robin)", async () => {
    const dead = `127.0.0.1:${await freePort()}`;
    const delays: number[] = [];
    const c = client("master", { target: [dead, gw.plain], onRetry: (r) => r.error instanceof Unavailable && delays.push(r.delayMs) });
    for (let i = 0; i < 4; i++) assert.ok(await c.stats());
    assert.ok(delays.length >= 1, "calls that went to the dead target are retried");
    assert.ok(delays.every((d) => d === 0));
    const only = client("master", { target: dead, retries: 1, baseMs: 10 });
    await assert.rejects(only.stats(), Unavailable);
  });

  test("deadlines: a call past its deadline fails as DEADLINE_EXCEEDED", async () => {
    const c = client("master", { timeoutMs: 1, retries: 0 });
    await assert.rejects(c.recall("anything at all", ["global"]), (e: unknown) => e instanceof Unavailable && e.code === Code.DeadlineExceeded);
  });
});
