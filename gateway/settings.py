"""Gateway settings: built once in main() (from defaults, an optional TOML file, MEMGATE_* env
variables and CLI flags, in that order of precedence) and passed down through constructors."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from gateway.core.model.limits import Limits
from gateway.core.recall.recall_settings import RecallSettings
from gateway.embedding.factory import EMBEDDER_KINDS
from gateway.embedding.judge_head import load_judge

#: embedder kinds whose vectors read Chinese (and the other languages they cover) as well as
#: English: a CJK query keeps the usual fusion weights with them
#: the embedder a gateway (and every benchmark) runs unless told otherwise
DEFAULT_EMBEDDER = "e5-multilingual"
MULTILINGUAL_EMBEDDERS = frozenset({"use-multilingual", "minilm+use", "e5-multilingual"})


#: ``injection_embedder`` values: the kind the shipped attack prototypes are made with, or none
INJECTION_EMBEDDERS = ("e5-multilingual", "use-multilingual", "")

#: the derived gRPC cap's room above the admission bounds, for the calls they do not bound
UNBOUNDED_CALLS_ROOM = 16


#: most recall worker processes (each holds an embedder and a copy of the vector index), and
#: most that ``recall_processes = -1`` picks
MAX_RECALL_PROCESSES = 16
AUTO_RECALL_PROCESSES = 4


def usable_cores() -> int:
    """The cores this process may run on (its affinity, e.g. a container's CPU set)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


@dataclass(frozen=True, slots=True)
class Settings:
    host: str = "127.0.0.1"
    port: int = 50051
    #: Prometheus text endpoint (GET /metrics) on ``host``; 0 = off
    metrics_port: int = 0
    data_dir: Path = Path(".memgate")
    #: Agent id with master rights (reads every namespace, decides proposals).
    master_agent: str = "master"
    #: agent id -> API key. Empty: no key checking (loopback development).
    api_keys: Mapping[str, str] = field(default_factory=dict)
    # transport security (docs/SECURITY.md "Transport security"): PEM files; empty = plaintext
    tls_cert: str = ""  # the server's certificate chain
    tls_key: str = ""  # its private key
    #: CA that signs client certificates: set, every client must present one (mTLS)
    tls_client_ca: str = ""
    #: with mTLS: the client certificate's CN (or one of its SANs) is the agent id; an
    #: x-agent-id header that names anything else is refused (UNAUTHENTICATED)
    tls_agent_from_cert: bool = False
    #: failed authentications (wrong key, lying certificate header) per claimed agent id and per
    #: presented key within ``auth_failure_window_s`` before that id's or key's further failures
    #: are refused for the rest of the window (RESOURCE_EXHAUSTED, retry-after-ms); a valid
    #: credential always passes; 0 = no limit
    auth_failure_limit: int = 20
    auth_failure_window_s: float = 60.0

    # backends: empty = embedded SQLite adapters under data_dir
    redis_url: str = ""
    neo4j_uri: str = ""
    neo4j_user: str = ""
    neo4j_password: str = ""
    neo4j_database: str = "neo4j"
    #: threads that run Neo4j reads on the blocking driver (``stores/neo4j_reads.py``): 2 keep a
    #: recall's two reads side by side; more let reader threads crowd the event loop off the GIL
    #: (200 agents: p99 0.8 s at 2, 1.7 s at 4, 2.7 s at 16; docs/BENCHMARKS-HISTORY.md)
    neo4j_read_threads: int = 2
    #: processes that run recall pipelines beside the gateway's own (``gateway/recall_workers``):
    #: each has its own GIL, embedder, stores' connections and copy of the vector index, kept
    #: current over a private socket; 0 = recalls run in the gateway process only; -1 = one
    #: per core, at most 4, none on one core (``recall_workers()``; docs/SCALING.md)
    recall_processes: int = -1
    #: when they start: "lazy" (the default) at the first recall that finds another one
    #: running, so an idle or single-agent gateway holds no worker (each ~300 MB with MiniLM);
    #: "eager" with the gateway (docs/SCALING.md)
    recall_workers_start: str = "lazy"
    #: where acknowledged writes are journaled: sqlite (a file under data_dir, one gateway per
    #: data dir) | redis (Redis Streams on redis_url, shared by gateway replicas; docs/SCALING.md)
    journal_backend: str = "sqlite"
    #: the Redis journal: key prefix (replicas of one deployment share it), partitions (streams;
    #: a namespace's writes apply in order), durability "aof" (trust appendfsync always) or
    #: "wait" (WAIT for this many replicas), lease/reclaim times of a dead replica's partitions
    redis_journal_prefix: str = "mg"
    redis_journal_partitions: int = 8
    redis_journal_durability: str = "aof"
    redis_journal_wait_replicas: int = 1
    redis_journal_wait_timeout_ms: int = 1000
    redis_journal_lease_ms: int = 5000
    #: this replica's name in the journal's consumer group and the change stream; "" = host-pid
    replica_id: str = ""
    #: where the control ledger lives (proposals, review queue, pending facts, audit, aliases,
    #: task steps, settings, the formation transcript): sqlite (a file under data_dir) | redis
    #: (on redis_url under redis_journal_prefix, shared by replicas); "" = as journal_backend
    ledger_backend: str = ""
    #: redis_url names one node of a Redis Cluster: the journal, the ledger, working memory and
    #: the index change stream use a cluster client (their keys are hash-tagged per slot)
    redis_cluster: bool = False
    #: audit rows older than this are dropped (the hourly pruning pass); 0 = kept until erased
    audit_retention_days: float = 0.0

    #: one of ``embedding.factory.EMBEDDER_KINDS``: e5-multilingual (the default: Chinese,
    #: English and mixed stores in one space, ONNX Runtime int8), minilm (English only, ONNX
    #: Runtime fp32) … hash (tests)
    embedder: str = DEFAULT_EMBEDDER
    embed_cache_size: int = 1024
    #: where the ONNX models built from the installed weights are kept between starts (a start
    #: then loads in ~1 s instead of building in ~4 s); "" = ``onnx/`` in memgate's model cache
    #: ($MEMGATE_MODEL_CACHE, default ~/.cache/memgate/models); "off" = build at every start
    onnx_cache_dir: str = ""
    #: the second prompt-injection screen (docs/SECURITY.md "Quarantined: prompt injection"): a
    #: text the rules let through is an injection when this encoder puts it this close to a
    #: known attack. "use-multilingual" (the default: a second encoder, ~110 MB; the best on the
    #: held-apart set), "e5-multilingual" (the gateway's default encoder, shared with its cache:
    #: no second model; 3 fewer of 358 held-apart attacks), "" = the rules alone. Without its
    #: package it logs a warning at start and the rules run alone.
    injection_embedder: str = "use-multilingual"
    #: ONNX Runtime intra-op threads of the embedder; 0 = all cores
    embed_threads: int = 0
    #: idle ONNX Runtime threads spin for the next run: a lone query ~1 ms sooner on idle cores,
    #: about twice the CPU per query on busy or shared ones (off by default)
    embed_spinning: bool = False
    #: threads that embed recall queries (their own pool: a recall never waits behind an apply
    #: batch's embedding in the shared pool)
    query_embed_threads: int = 1
    #: at most this many query texts embedded in one run (concurrent recalls share a run)
    query_embed_batch: int = 32
    #: the event loop's default thread pool (apply-batch embedding, index file I/O);
    #: 0 = Python's default, min(32, cores + 4). Each SQLite file has one worker thread of its own.
    worker_threads: int = 0

    # capacity (admission control): beyond these, RESOURCE_EXHAUSTED with retry-after-ms
    #: reads in flight (Recall, MatchSkill, Get, Timeline, ...) on this server / per agent; 0 = no cap
    #: (16: enough waiting queries to fill the query embedder's batches; more only lengthens
    #: every recall's wait. bench.load, docs/BENCHMARKS-HISTORY.md "The knobs")
    max_inflight_reads: int = 16
    max_inflight_reads_per_agent: int = 8
    #: writes in flight (Write, BatchWrite, AppendTurn, ...) on this server / per agent; 0 = no cap
    max_inflight_writes: int = 32
    max_inflight_writes_per_agent: int = 16
    #: calls that may wait for a server-wide slot (FIFO) before being refused, and how long each
    #: may wait: a burst is absorbed by a bounded wait rather than a round of refusals and
    #: retries. Worst wait ~ (in flight + queue) / calls served per second; keep it well under a
    #: second (bench.load, docs/BENCHMARKS-HISTORY.md "The knobs"). 0 = refuse at once
    admission_queue_reads: int = 48
    admission_queue_writes: int = 32
    admission_queue_timeout_ms: int = 500
    #: what an overloaded answer tells the caller to wait before retrying: at least this, more
    #: when many agents wait (agents turned away / calls admitted per second), at most the max
    overload_retry_after_ms: int = 100
    overload_retry_after_max_ms: int = 2000
    #: gRPC's own hard cap on concurrent RPCs (any method), checked before any Python work of the
    #: call (RESOURCE_EXHAUSTED without retry-after-ms); 0 = derived from the admission bounds
    #: (``concurrent_rpc_cap``), -1 = none
    grpc_max_concurrent_rpcs: int = 0
    shards: int = 8
    #: where long-term vectors live in memory (``vector_mode``): "full" = every vector in this
    #: process's FAISS shards, rebuilt from the records at start (start-up grows with the corpus);
    #: "on_demand" = a namespace's vectors loaded from the records when a recall first needs
    #: them and evicted least recently used past ``vector_cache_mb`` (``stores/vector_cache.py``);
    #: "auto" = on_demand with Neo4j records, full on the embedded default
    vectors: str = "auto"
    #: on_demand: the memory the held vectors may take (384-d: ~2.2 KB a vector with its id:
    #: ~950k vectors in 2 GB)
    vector_cache_mb: int = 2048
    #: on_demand: namespaces loaded at start and never evicted (comma-separated)
    vector_pinned: str = "global"

    # write path
    #: refuse to start when a store would acknowledge writes an OS crash can lose (e.g. a Redis
    #: without ``appendfsync always``); off: the same check only logs a warning
    strict_durability: bool = False
    apply_batch: int = 64
    wait_timeout_s: float = 10.0
    flush_interval_s: float = 2.0
    #: applied journal entries (and so their idempotency keys) are kept this long
    journal_retention_days: float = 7.0
    #: back-pressure: new writes get RESOURCE_EXHAUSTED while this many wait to be applied
    max_pending_writes: int = 100_000

    # working memory
    session_ttl_s: int = 3600  # 30 min .. 24 h (seed 004 §2.2)
    #: a sub-agent's AppendTurn into user/* or global: "proposal" (the master approves it) or
    #: "deny" (PERMISSION_DENIED). State, compaction and scratch there are always denied.
    shared_turn_policy: str = "proposal"
    dialogue_max_turns: int = 20
    zone_hard_cap: int = 200

    # recall
    dedup_threshold: float = 0.92
    #: every semantic fact gets a slot (subject + attribute) and a value: a newer value
    #: supersedes the old one, the same value in other words or another language merges
    fact_slots: bool = True
    #: at start, facts stored without a slot (before slots existed) get theirs, once per
    #: vocabulary version (one pass over the stored vectors; README "What is true now")
    slot_backfill: bool = True
    #: a dialogue turn (episodic, with a session_id) is indexed with this many previous turns of
    #: its session, its speaker and (``context_date``) its date; 0 = each turn alone
    context_turns: int = 1
    context_date: bool = True
    #: the turn after a dialogue turn joins its lexical context once it is written
    context_next: bool = True
    #: also embed the context (off: on bench/dialogues the turn+context vector ranked better
    #: alone but the fused ranking lost ~1 point of R@10, docs/BENCHMARKS-HISTORY.md)
    context_dense: bool = False
    #: fusion (``core/recall/fusion.py``): weights of the dense cosine and the relative BM25 score, and
    #: how far recency/importance/confidence may move a hit (a fraction of its relevance)
    w_dense: float = 0.8
    #: recency when undecided: two statements in an answer about the same subject, at least this
    #: near in meaning, rank newer first, the older labelled "earlier, as of <date>"; 0 = off
    compete_cosine: float = 0.5
    #: judge what changes what by meaning, with the head trained for the embedder
    #: (``core/truth/judge.py``; an embedder without one keeps the rule above)
    update_judge: bool = True
    w_lexical: float = 0.2
    #: ... for short facts and skills (semantic, procedural), whose lexical match is mostly a
    #: shared name: the cosine decides (bench/multilingual_eval.py)
    w_fact_dense: float = 1.0
    w_fact_lexical: float = 0.02
    #: ... for a query written mostly in CJK, under a multilingual embedder (every layer: dense 1;
    #: 0: the cosine alone, once Chinese names are masked in the query)
    w_cjk_lexical: float = 0.0
    rank_nudge: float = 0.02
    #: a query term in more than this fraction of the searched memories (at least 200 of them)
    #: is searched like a stop word: a speaker's name in every turn adds thousands of matches
    #: and nothing to the ranking (docs/BENCHMARKS-HISTORY.md); 0 keeps every term
    lexical_common_terms: float = 0.05
    #: embedded records: decoded memories a recall's loads are answered from without a trip to
    #: SQLite (``stores/row_cache.py``; ~1-2 KB each; 0 = off). Only with the SQLite journal,
    #: whose lock makes this process the one writer of the data dir; Neo4j records: not used.
    record_cache_entries: int = 20_000
    #: when a recall's lexical search runs: "beside" the query's embedding (its own round trip;
    #: the dense hits' memories load in another), or "after_dense": after the vector search, in
    #: one round trip with the dense hits' memories. "auto": after_dense on Neo4j, where a round
    #: trip costs ms and its CPU competes with the embedding (-1.7 ms per recall at 10k), beside
    #: on SQLite (after_dense: +0.4 to +0.8 ms there). The same hits either way.
    lexical_schedule: str = "auto"
    #: a dialogue turn whose speaker the query names: its relevance x (1 + this)
    speaker_boost: float = 0.3
    #: the query's dense vector is computed with its proper names masked (``core/recall/query_text.py``)
    dense_mask_names: bool = True
    half_life_days: float = 7.0
    default_token_budget: int = 512
    recall_cache_ttl_s: float = 30.0
    recall_cache_entries: int = 512

    # circuit breakers (seed 003 §4.2); a slow-read limit of 0 means only failures trip
    breaker_cooldown_s: float = 1.0
    #: slow reads in a row that trip a breaker (their latency is the backend's own time)
    breaker_slow_after: int = 3
    working_slow_ms: float = 50.0  # a working-memory read slower than this trips
    working_recover: int = 10  # ... and it closes after this many reads faster than
    working_recover_ms: float = 20.0
    graph_slow_ms: float = 200.0  # a graph query slower than this trips
    graph_recover: int = 5
    graph_recover_ms: float = 100.0
    records_slow_ms: float = 0.0  # records and vectors: failures trip, a health check recovers

    # lifecycle (seed 002 §3.3): score = importance x 0.95^days since last access
    decay_threshold: float = 0.05  # below it a memory is archived
    decay_interval_s: float = 21_600.0  # background sweep every 6 h; 0 = only on request
    compact_min_episodes: int = 5  # this many decayed episodes become one semantic summary

    # memory formation (seed 000 §3.4): what mines sessions for facts, and when
    extractor: str = "rules"  # rules | llm (any OpenAI-compatible chat-completions endpoint)
    summariser: str = "extractive"  # extractive | llm
    summary_token_budget: int = 200  # a rolled-off dialogue's summary stays within this
    formation_idle_s: float = 900.0  # a session idle this long is mined; 0 = only EndSession
    formation_every_turns: int = 50  # ... and one with this many new turns; 0 = off
    formation_max_turns: int = 500  # turns per extractor call (a longer session is chunked)
    formation_scan_s: float = 5.0  # how often the idle / every-N triggers are checked
    # what a speaker says about their life becomes observations: episodic events (third
    # person, relative time resolved) and, when stable, candidate facts (issue 27)
    formation_observations: bool = True
    # a mined session's turns (both sides, small talk left out) stay in long-term memory as
    # episodic memories; observations and facts point at them; off: only those
    keep_turns: bool = True
    observer: str = "rules"  # rules | llm (the model below; the rules when it fails)
    # the model behind extractor/summariser "llm": base URL up to /v1, model name, key
    llm_base_url: str = ""
    llm_model: str = ""
    llm_api_key: str = ""
    llm_timeout_s: float = 30.0
    llm_retries: int = 1  # extra attempts after a timeout, 5xx or invalid output
    llm_breaker_failures: int = 3  # failed calls in a row that open the model's breaker
    llm_breaker_cooldown_s: float = 60.0
    #: how an answer's JSON schema is sent: json_schema (OpenAI's form: vLLM, llama-server),
    #: json_object (llama-cpp-python's server) or none
    llm_response_format: str = "json_schema"
    # traces (OpenTelemetry, the optional extra memgate[otel]); off by default
    otel_enabled: bool = False
    #: OTLP/gRPC collector, e.g. http://127.0.0.1:4317; empty = the exporter's default
    #: (OTEL_EXPORTER_OTLP_ENDPOINT, else localhost:4317)
    otel_endpoint: str = ""
    otel_service_name: str = "memgate"

    limits: Limits = field(default_factory=Limits)

    def validate(self) -> Settings:
        problems = []
        if not 1800 <= self.session_ttl_s <= 86_400:
            problems.append("session_ttl_s must be between 1800 (30 min) and 86400 (24 h)")
        if self.half_life_days < 7:
            problems.append("half_life_days must be >= 7 (seed 000 §4.2)")
        problems += self._ranking_problems()
        if self.shards < 1:
            problems.append("shards must be >= 1")
        problems += self._vector_problems()
        if self.embedder not in EMBEDDER_KINDS:
            problems.append("embedder must be one of " + ", ".join(map(repr, EMBEDDER_KINDS)))
        if self.injection_embedder not in INJECTION_EMBEDDERS:
            problems.append(
                "injection_embedder must be 'e5-multilingual', 'use-multilingual' or '' (the "
                "rules alone)"
            )
        if self.embed_threads < 0:
            problems.append("embed_threads must be >= 0 (0 = all cores)")
        problems += self._capacity_problems()
        if self.shared_turn_policy not in ("proposal", "deny"):
            problems.append("shared_turn_policy must be 'proposal' or 'deny'")
        if not 0 <= self.context_turns <= 8:
            problems.append("context_turns must be between 0 and 8")
        if self.dialogue_max_turns < 2:
            problems.append("dialogue_max_turns must be >= 2")
        problems += self._formation_problems() + self._tls_problems()
        problems += self._journal_problems()
        if problems:
            raise ValueError("invalid settings: " + "; ".join(problems))
        return self

    def concurrent_rpc_cap(self) -> int | None:
        """gRPC's cap on concurrent RPCs: ``grpc_max_concurrent_rpcs``, or when 0, the admission
        bounds plus room for the calls they do not bound (health, stats, operator calls): beyond
        it a call is refused before it costs the event loop anything. None = no cap."""
        if self.grpc_max_concurrent_rpcs:
            return self.grpc_max_concurrent_rpcs if self.grpc_max_concurrent_rpcs > 0 else None
        if not (self.max_inflight_reads and self.max_inflight_writes):
            return None  # an unbounded class: no derived cap
        return (
            self.max_inflight_reads
            + self.max_inflight_writes
            + self.admission_queue_reads
            + self.admission_queue_writes
            + UNBOUNDED_CALLS_ROOM
        )

    def _ranking_problems(self) -> list[str]:
        out = []
        if min(self.w_dense, self.w_lexical) < 0 or self.w_dense + self.w_lexical <= 0:
            out.append("w_dense and w_lexical must be >= 0, not both 0")
        if not 0 <= self.lexical_common_terms <= 1:
            out.append("lexical_common_terms must be between 0 and 1 (0 keeps every term)")
        if self.lexical_schedule not in ("auto", "beside", "after_dense"):
            out.append("lexical_schedule must be 'auto', 'beside' or 'after_dense'")
        if not 0 <= self.record_cache_entries <= 1_000_000:
            out.append("record_cache_entries must be between 0 (off) and 1000000")
        if not (0 <= self.rank_nudge <= 0.2 and 0 <= self.speaker_boost <= 1):
            out.append("rank_nudge must be between 0 and 0.2, speaker_boost between 0 and 1")
        return out

    def _capacity_problems(self) -> list[str]:
        out = [
            f"{name} must be >= 0"
            for name in (
                "query_embed_threads",
                "query_embed_batch",
                "worker_threads",
                "max_inflight_reads",
                "max_inflight_reads_per_agent",
                "max_inflight_writes",
                "max_inflight_writes_per_agent",
                "admission_queue_reads",
                "admission_queue_writes",
                "admission_queue_timeout_ms",
                "overload_retry_after_ms",
                "overload_retry_after_max_ms",
            )
            if getattr(self, name) < 0
        ]
        if self.query_embed_threads < 1:
            out.append("query_embed_threads must be >= 1")
        if self.neo4j_read_threads < 1:
            out.append("neo4j_read_threads must be >= 1")
        if not -1 <= self.recall_processes <= MAX_RECALL_PROCESSES:
            out.append(f"recall_processes must be 0..{MAX_RECALL_PROCESSES}, or -1 (auto)")
        if self.recall_workers_start not in ("lazy", "eager"):
            out.append("recall_workers_start must be lazy or eager")
        if self.grpc_max_concurrent_rpcs < -1:
            out.append("grpc_max_concurrent_rpcs must be >= -1 (0 = derived, -1 = none)")
        if self.query_embed_batch < 1:
            out.append("query_embed_batch must be >= 1")
        if self.auth_failure_limit < 0 or self.auth_failure_window_s <= 0:
            out.append("auth_failure_limit must be >= 0 and auth_failure_window_s > 0")
        return out

    @property
    def agent_from_certificate(self) -> bool:
        """Whether the client certificate names the agent: with ``tls_agent_from_cert``, and
        always with mTLS and no API keys — nothing else authenticates the ``x-agent-id`` header
        then, so a header alone never names the agent (issue 33 L7)."""
        return self.tls_agent_from_cert or (bool(self.tls_client_ca) and not self.api_keys)

    def _tls_problems(self) -> list[str]:
        out: list[str] = []
        if bool(self.tls_cert) != bool(self.tls_key):
            out.append("tls_cert and tls_key go together: give both (PEM files) or neither")
        if self.tls_client_ca and not self.tls_cert:
            out.append("tls_client_ca needs tls_cert and tls_key (mTLS is TLS first)")
        if self.tls_agent_from_cert and not self.tls_client_ca:
            out.append("tls_agent_from_cert needs tls_client_ca (client certificates)")
        return out

    def _journal_problems(self) -> list[str]:
        out: list[str] = []
        if self.journal_backend not in ("sqlite", "redis"):
            out.append("journal_backend must be 'sqlite' or 'redis'")
        if self.journal_backend == "redis" and not self.redis_url:
            out.append("journal_backend 'redis' needs redis_url (MEMGATE_REDIS_URL)")
        if not 1 <= self.redis_journal_partitions <= 1024:
            out.append("redis_journal_partitions must be between 1 and 1024")
        if self.redis_journal_durability not in ("aof", "wait"):
            out.append("redis_journal_durability must be 'aof' or 'wait'")
        if self.redis_journal_lease_ms < 100 or self.redis_journal_wait_replicas < 0:
            out.append("redis_journal_lease_ms must be >= 100, redis_journal_wait_replicas >= 0")
        if self.ledger_backend not in ("", "sqlite", "redis"):
            out.append("ledger_backend must be 'sqlite', 'redis' or '' (as journal_backend)")
        if self.ledger() == "redis" and not self.redis_url:
            out.append("ledger_backend 'redis' needs redis_url (MEMGATE_REDIS_URL)")
        if self.redis_cluster and not self.redis_url:
            out.append("redis_cluster needs redis_url (any node of the cluster)")
        if self.redis_cluster and self.redis_journal_durability == "wait":
            out.append("redis_journal_durability 'wait' is not supported with redis_cluster")
        if self.audit_retention_days < 0:
            out.append("audit_retention_days must be >= 0 (0 = keep)")
        return out

    def recall_workers(self) -> int:
        """How many recall worker processes to run (``recall_processes``, resolved)."""
        if self.recall_processes >= 0:
            return self.recall_processes
        cores = usable_cores()
        return 0 if cores < 2 else min(cores, AUTO_RECALL_PROCESSES)

    def onnx_cache(self) -> Path | None:
        """``onnx_cache_dir`` resolved: a directory, or None when it is off."""
        from gateway.model_files import cache_root

        chosen = self.onnx_cache_dir.strip()
        if chosen.lower() == "off":
            return None
        return Path(chosen).expanduser() if chosen else cache_root() / "onnx"

    def recall(self) -> RecallSettings:
        """What recall reads of these settings (``core/recall/recall_settings.py``)."""
        return RecallSettings(
            limits=self.limits,
            master_agent=self.master_agent,
            default_token_budget=self.default_token_budget,
            dense_mask_names=self.dense_mask_names,
            half_life_days=self.half_life_days,
            rank_nudge=self.rank_nudge,
            w_dense=self.w_dense,
            w_lexical=self.w_lexical,
            w_fact_dense=self.w_fact_dense,
            w_fact_lexical=self.w_fact_lexical,
            w_cjk_lexical=self.w_cjk_lexical,
            speaker_boost=self.speaker_boost,
            multilingual=self.embedder in MULTILINGUAL_EMBEDDERS,
            query_embed_threads=self.query_embed_threads,
            query_embed_batch=self.query_embed_batch,
            lexical_after_dense=self.lexical_after_dense(),
            compete_cosine=self.compete_cosine,
            judge=load_judge(self.embedder) if self.update_judge else None,
            cache_ttl_s=self.recall_cache_ttl_s,
            cache_entries=self.recall_cache_entries,
        )

    def lexical_after_dense(self) -> bool:
        """Whether recalls run their lexical search after the vector search (``lexical_schedule``,
        resolved)."""
        if self.lexical_schedule == "auto":
            return bool(self.neo4j_uri)
        return self.lexical_schedule == "after_dense"

    def _vector_problems(self) -> list[str]:
        out = []
        if self.vectors not in ("auto", "full", "on_demand"):
            out.append("vectors must be 'auto', 'full' or 'on_demand'")
        if self.vector_cache_mb < 1:
            out.append("vector_cache_mb must be >= 1")
        return out

    def vector_mode(self) -> str:
        """``vectors`` resolved: "on_demand" or "full"."""
        if self.vectors == "auto":
            return "on_demand" if self.neo4j_uri else "full"
        return self.vectors

    def pinned_namespaces(self) -> tuple[str, ...]:
        return tuple(ns.strip() for ns in self.vector_pinned.split(",") if ns.strip())

    def ledger(self) -> str:
        """The ledger's backend: ``ledger_backend``, or the journal's when that is empty."""
        return self.ledger_backend or self.journal_backend

    def _formation_problems(self) -> list[str]:
        out: list[str] = []
        if self.extractor not in ("rules", "llm"):
            out.append("extractor must be 'rules' or 'llm'")
        if self.summariser not in ("extractive", "llm"):
            out.append("summariser must be 'extractive' or 'llm'")
        if self.observer not in ("rules", "llm"):
            out.append("observer must be 'rules' or 'llm'")
        if self.llm_response_format not in ("json_schema", "json_object", "none"):
            out.append("llm_response_format must be 'json_schema', 'json_object' or 'none'")
        if "llm" in (self.extractor, self.summariser, self.observer) and not (
            self.llm_base_url and self.llm_model
        ):
            out.append(
                "extractor/summariser/observer 'llm' needs llm_base_url (an OpenAI-compatible endpoint "
                "up to /v1) and llm_model (MEMGATE_LLM_BASE_URL, MEMGATE_LLM_MODEL)"
            )
        if self.summary_token_budget < 20:
            out.append("summary_token_budget must be >= 20")
        if self.formation_every_turns < 0 or self.formation_idle_s < 0:
            out.append("formation_every_turns and formation_idle_s must be >= 0 (0 = off)")
        if self.formation_max_turns < 1 or self.formation_scan_s <= 0:
            out.append("formation_max_turns must be >= 1 and formation_scan_s > 0")
        if self.llm_timeout_s <= 0 or self.llm_retries < 0 or self.llm_breaker_failures < 1:
            out.append("llm_timeout_s > 0, llm_retries >= 0, llm_breaker_failures >= 1")
        return out


_ENV_PREFIX = "MEMGATE_"


def _coerce(name: str, raw: Any, current: Any) -> Any:
    if isinstance(current, bool):
        return str(raw).lower() in ("1", "true", "yes", "on") if isinstance(raw, str) else bool(raw)
    if isinstance(current, int):
        return int(raw)
    if isinstance(current, float):
        return float(raw)
    if isinstance(current, Path):
        return Path(raw)
    if name == "api_keys":
        if isinstance(raw, Mapping):
            return dict(raw)
        # env form: "agent1=key1,agent2=key2"
        return dict(p.split("=", 1) for p in str(raw).split(",") if "=" in p)
    return raw


def load_settings(
    config_file: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Settings:
    """Defaults < TOML file ([memgate] table or top level) < MEMGATE_* env < explicit overrides."""
    settings = Settings()
    names = {f.name for f in fields(Settings)} - {"limits"}
    layers: list[Mapping[str, Any]] = []
    if config_file:
        data = tomllib.loads(Path(config_file).read_text(encoding="utf-8"))
        layers.append(data.get("memgate", data))
    env = os.environ if env is None else env
    layers.append(
        {k[len(_ENV_PREFIX) :].lower(): v for k, v in env.items() if k.startswith(_ENV_PREFIX)}
    )
    layers.append({k: v for k, v in (overrides or {}).items() if v is not None})
    for layer in layers:
        changes = {k: _coerce(k, v, getattr(settings, k)) for k, v in layer.items() if k in names}
        settings = replace(settings, **changes)
    return settings.validate()
