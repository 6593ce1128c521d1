// GatewayClient: the gateway's core RPCs as async methods (the Python client's core, named in
// camelCase). Answers are the generated messages (src/gen/memgate/v1/memgate_pb.ts); times go
// in as Date and come back as google.protobuf.Timestamp (timestampDate() of
// @bufbuild/protobuf/wkt turns one into a Date).
import { create } from "@bufbuild/protobuf";
import { timestampFromDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { randomUUID } from "node:crypto";
import { Code } from "@connectrpc/connect";
import { typed, Unavailable } from "./errors.js";
import { Transport, type ClientOptions } from "./transport.js";
import * as pb from "./gen/memgate/v1/memgate_pb.js";

export type LayerName = "working" | "episodic" | "semantic" | "procedural";

const LAYERS: Record<string, pb.Layer> = {
  working: pb.Layer.WORKING,
  episodic: pb.Layer.EPISODIC,
  semantic: pb.Layer.SEMANTIC,
  procedural: pb.Layer.PROCEDURAL,
};
/** An unknown name goes out as an unknown number: the gateway answers INVALID_ARGUMENT. */
const layerNumber = (name: string): pb.Layer => (name ? (LAYERS[name] ?? (99 as pb.Layer)) : pb.Layer.LAYER_UNSPECIFIED);
const ts = (d: Date | undefined): Timestamp | undefined => (d ? timestampFromDate(d) : undefined);

/** A fresh idempotency key (32 hex digits). */
export const newKey = (): string => randomUUID().replaceAll("-", "");

export interface WriteOptions {
  type?: string;
  importance?: number;
  confidence?: number;
  sessionId?: string;
  taskId?: string;
  eventTime?: Date;
  metadata?: Record<string, string>;
  evidence?: string[];
  entities?: string[];
  /** Same agent + key = the same write, stored once. Made up when not given. */
  idempotencyKey?: string;
  role?: string;
  zone?: string;
}
export interface WriteInput extends WriteOptions {
  namespace: string;
  layer: LayerName | string;
  content: string;
}
/** `wait`: answer once the write is applied to the stores (read-your-write). */
export interface Waiting {
  wait?: boolean;
  signal?: AbortSignal;
}

export function writeItem(i: WriteInput): pb.WriteItem {
  return create(pb.WriteItemSchema, {
    namespace: i.namespace,
    layer: layerNumber(i.layer),
    content: i.content,
    type: i.type ?? "",
    importance: i.importance,
    confidence: i.confidence,
    sessionId: i.sessionId ?? "",
    taskId: i.taskId ?? "",
    eventTime: ts(i.eventTime),
    metadata: i.metadata ?? {},
    evidence: i.evidence ?? [],
    entities: i.entities ?? [],
    idempotencyKey: i.idempotencyKey || newKey(),
    role: i.role ?? "",
    zone: i.zone ?? "",
  });
}

export interface RecallOptions {
  topK?: number;
  layers?: (LayerName | string)[];
  tokenBudget?: number;
  sessionId?: string;
  start?: Date;
  end?: Date;
  types?: string[];
  asOf?: Date;
  signal?: AbortSignal;
}

export class GatewayClient {
  private readonly t: Transport;

  constructor(options: ClientOptions) {
    this.t = new Transport(options);
  }

  get agentId(): string {
    return this.t.agentId;
  }

  close(): void {
    this.t.close();
  }

  [Symbol.dispose](): void {
    this.close();
  }

  // ---- long-term memories
  /** Writes one memory; its id ("" when skipped or when it became a proposal). */
  async write(namespace: string, layer: LayerName | string, content: string, o: WriteOptions & Waiting = {}): Promise<string> {
    return (await this.writeResult(namespace, layer, content, o)).id;
  }

  /** Writes one memory; the full result (duplicate, redactions, proposalId, ...). */
  async writeResult(namespace: string, layer: LayerName | string, content: string, o: WriteOptions & Waiting = {}): Promise<pb.WriteResult> {
    const req = create(pb.WriteRequestSchema, { item: writeItem({ ...o, namespace, layer, content }), wait: o.wait ?? false });
    const r = await this.t.run("Write", (s, c) => s.write(req, c), o.signal);
    return r.result ?? create(pb.WriteResultSchema);
  }

  /** All or nothing: one bad item rejects the batch (INVALID_ARGUMENT names it). */
  async batchWrite(items: WriteInput[], o: Waiting = {}): Promise<pb.WriteResult[]> {
    const req = create(pb.BatchWriteRequestSchema, { items: items.map(writeItem), wait: o.wait ?? false });
    return (await this.t.run("BatchWrite", (s, c) => s.batchWrite(req, c), o.signal)).results;
  }

  /** Hits best first and the memory block (`memoryBlock`) for the model's context. */
  async recall(query: string, namespaces: string[], o: RecallOptions = {}): Promise<pb.RecallResponse> {
    const req = create(pb.RecallRequestSchema, {
      query,
      namespaces,
      topK: o.topK ?? 10,
      layers: (o.layers ?? []).map(layerNumber),
      tokenBudget: o.tokenBudget ?? 0,
      sessionId: o.sessionId ?? "",
      start: ts(o.start),
      end: ts(o.end),
      types: o.types ?? [],
      asOf: ts(o.asOf),
    });
    return this.t.run("Recall", (s, c) => s.recall(req, c), o.signal);
  }

  async get(id: string, signal?: AbortSignal): Promise<pb.Memory> {
    const r = await this.t.run("Get", (s, c) => s.get({ id }, c), signal);
    return r.memory ?? create(pb.MemorySchema);
  }

  /** Every version, oldest first; `asOf`: only the version true then. */
  async history(id: string, asOf?: Date, signal?: AbortSignal): Promise<pb.Memory[]> {
    return (await this.t.run("History", (s, c) => s.history({ id, asOf: ts(asOf) }, c), signal)).versions;
  }

  /** Forgets a memory; the tombstone (no content). */
  async forget(id: string, reason = "", signal?: AbortSignal): Promise<pb.Memory> {
    const r = await this.t.run("Forget", (s, c) => s.forget({ id, reason }, c), signal);
    return r.memory ?? create(pb.MemorySchema);
  }

  // ---- working memory
  async appendTurn(
    namespace: string,
    sessionId: string,
    o: { role: string; content: string; zone?: string; metadata?: Record<string, string>; idempotencyKey?: string; at?: Date; signal?: AbortSignal },
  ): Promise<pb.AppendTurnResponse> {
    const req = create(pb.AppendTurnRequestSchema, {
      namespace,
      sessionId,
      role: o.role,
      content: o.content,
      zone: o.zone ?? "dialogue",
      metadata: o.metadata ?? {},
      idempotencyKey: o.idempotencyKey || newKey(),
      at: ts(o.at),
    });
    return this.t.run("AppendTurn", (s, c) => s.appendTurn(req, c), o.signal);
  }

  /** The session's turns; `degraded`: working memory could not be read. */
  async window(namespace: string, sessionId: string, zones: string[] = [], signal?: AbortSignal): Promise<pb.GetWindowResponse> {
    return this.t.run("GetWindow", (s, c) => s.getWindow({ namespace, sessionId, zones }, c), signal);
  }

  /** Mines the session's new turns for facts; `wait`: answer once that ran. Safe to repeat. */
  async endSession(namespace: string, sessionId: string, o: Waiting = {}): Promise<pb.EndSessionResponse> {
    return this.t.run("EndSession", (s, c) => s.endSession({ namespace, sessionId, wait: o.wait ?? false }, c), o.signal);
  }

  // ---- episodic
  /** Records an event; `links` are [RELATION, node kind, node id]. Its id. */
  async recordEvent(
    namespace: string,
    content: string,
    o: WriteOptions & Waiting & { userId?: string; links?: [string, string, string][] } = {},
  ): Promise<string> {
    const req = create(pb.RecordEventRequestSchema, {
      event: writeItem({ ...o, namespace, layer: "episodic", content }),
      userId: o.userId ?? "",
      links: (o.links ?? []).map(([type, kind, id]) => ({ type, target: { kind, id } })),
      wait: o.wait ?? false,
    });
    return (await this.t.run("RecordEvent", (s, c) => s.recordEvent(req, c), o.signal)).result?.id ?? "";
  }

  /** The namespace's events in time order, optionally within [start, end). */
  async timeline(namespace: string, o: { start?: Date; end?: Date; limit?: number; types?: string[]; signal?: AbortSignal } = {}): Promise<pb.Event[]> {
    const req = { namespace, start: ts(o.start), end: ts(o.end), limit: o.limit ?? 100, types: o.types ?? [] };
    return (await this.t.run("Timeline", (s, c) => s.timeline(req, c), o.signal)).events;
  }

  // ---- semantic facts and sub-agent results
  /** A fact becomes a semantic memory once seen in two sessions, or at once if `explicit`. */
  async proposeFact(
    namespace: string,
    fact: string,
    o: { sessionId: string; evidence?: string[]; confidence?: number; explicit?: boolean; signal?: AbortSignal },
  ): Promise<pb.ProposeFactResponse> {
    const req = { namespace, fact, sessionId: o.sessionId, evidence: o.evidence ?? [], confidence: o.confidence ?? 0.5, explicit: o.explicit ?? false };
    return this.t.run("ProposeFact", (s, c) => s.proposeFact(req, c), o.signal);
  }

  /** Hands a result back: recorded as an event of the task; each memory update is written (own
   * namespace) or proposed to the master (shared namespaces). Update i's key is `<key>:<i>`. */
  async submitResult(
    taskId: string,
    o: {
      status: string;
      summary: string;
      artifacts?: string[];
      decisions?: string[];
      memoryUpdates?: WriteInput[];
      sessionId?: string;
      idempotencyKey?: string;
      signal?: AbortSignal;
    },
  ): Promise<pb.SubmitResultResponse> {
    const key = o.idempotencyKey || newKey();
    const req = create(pb.SubmitResultRequestSchema, {
      taskId,
      status: o.status,
      summary: o.summary,
      artifacts: o.artifacts ?? [],
      decisions: o.decisions ?? [],
      memoryUpdates: (o.memoryUpdates ?? []).map((u, i) => ({ item: writeItem({ idempotencyKey: `${key}:${i}`, ...u }) })),
      sessionId: o.sessionId ?? "",
      idempotencyKey: key,
    });
    return this.t.run("SubmitResult", (s, c) => s.submitResult(req, c), o.signal);
  }

  // ---- arbitration (the master)
  async proposals(state = "pending", limit = 100, signal?: AbortSignal): Promise<pb.Proposal[]> {
    return (await this.t.run("ListProposals", (s, c) => s.listProposals({ state, limit }, c), signal)).proposals;
  }

  async approve(proposalId: string, reason = "", signal?: AbortSignal): Promise<pb.Proposal> {
    return this.t.run("ApproveProposal", (s, c) => s.approveProposal({ id: proposalId, reason }, c), signal);
  }

  async reject(proposalId: string, reason = "", signal?: AbortSignal): Promise<pb.Proposal> {
    return this.t.run("RejectProposal", (s, c) => s.rejectProposal({ id: proposalId, reason }, c), signal);
  }

  // ---- operations
  async stats(signal?: AbortSignal): Promise<pb.StatsResponse> {
    return this.t.run("Stats", (s, c) => s.stats({}, c), signal);
  }

  /** Every memory of the namespaces (master only), streamed: `for await (const m of ...)`.
   * Sent once (a stream is not retried). */
  async *export(namespaces: string[], includeVectors = false): AsyncGenerator<pb.ExportedMemory> {
    const { stub, options } = this.t.stream();
    try {
      for await (const m of stub.export({ namespaces, includeVectors }, options)) yield m;
    } catch (err) {
      const error = typed(err);
      // a lost connection (Connect: CANCELED) is UNAVAILABLE, as for unary calls
      throw error.code === Code.Canceled ? new Unavailable(`connection lost: ${error.message}`, Code.Unavailable, { cause: err }) : error;
    }
  }
}
