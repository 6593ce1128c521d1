"""``memgate mcp``: an MCP server (official ``mcp`` SDK) that gives an agent in an MCP host its
memory through a running gateway. docs/MCP.md reviews every tool as a model sees it.

It is a client of the gateway — the asyncio ``gateway.client.aio.GatewayClient`` under one agent
id — and runs no store of its own, so the gateway's namespaces, authorization and screening apply
to every tool call unchanged.

One namespace convention: ``memgate mcp --agent a1 --namespace user/alice`` makes the server's
*own namespaces* ``agent/a1``, ``user/alice`` (each ``--namespace``, in order) and ``global``.
Every ``namespace``/``namespaces`` parameter is optional: writes default to the first
``--namespace`` (else ``agent/<agent>``), reads to all of the server's own namespaces. Every
``session_id`` is optional too: one session id is made when the server starts (``--session``
fixes it). Results carry what a model uses (content, id, when, layer, why a hit matched), and a
refusal is a tool error in the tool's terms: what went wrong, then what to do.

Tools: ``remember``, ``recall``, ``forget``, ``timeline``, ``append_turn``, ``end_session``,
``propose_fact``, ``submit_result``, ``match_skill``; for the master also ``list_proposals``,
``approve`` and ``reject``. Resources: ``memgate://timeline/global`` and
``memgate://timeline/{kind}/{id}`` (what the ``timeline`` tool returns, for hosts that show
resources). Transports: stdio (what a desktop or IDE host launches) and streamable HTTP (bound to
127.0.0.1 unless told otherwise).
"""

from __future__ import annotations

import hmac
import inspect
import json
import re
import secrets
import socket
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any, Literal, TypeVar

import anyio
import grpc
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field, ValidationError

from gateway.client import GatewayError, types
from gateway.client.aio import GatewayClient

T = TypeVar("T")

MAX_OWN_NAMESPACES = 16  # --namespace given at most this often (recall reads at most 32)
TIMELINE_LIMIT = 50
_ID = r"[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}"
NAMESPACE_RE = re.compile(rf"global|(agent|user|task)/{_ID}")
SESSION_RE = re.compile(_ID)


# ---- the server's own namespaces and session
@dataclass(frozen=True, slots=True)
class Defaults:
    """What an omitted ``namespace``/``namespaces``/``session_id`` means for this server."""

    agent_id: str
    write: str  # the namespace a write goes to
    read: tuple[str, ...]  # the namespaces a read searches
    session_id: str

    @staticmethod
    def of(
        agent_id: str, namespaces: Sequence[str] = (), session_id: str | None = None
    ) -> Defaults:
        """Checked: raises ``ValueError`` with one line saying what is wrong."""
        if len(namespaces) > MAX_OWN_NAMESPACES:
            raise ValueError(f"at most {MAX_OWN_NAMESPACES} --namespace (got {len(namespaces)})")
        for ns in namespaces:
            if not NAMESPACE_RE.fullmatch(ns):
                raise ValueError(
                    f"--namespace {ns!r} is not a memgate namespace: use user/<id>, task/<id>, "
                    "agent/<id> or global (ids: letters, digits, . _ : @ -)"
                )
        if session_id is not None and not SESSION_RE.fullmatch(session_id):
            raise ValueError(
                f"--session {session_id!r}: use 1..128 letters, digits, . _ : @ - (starting "
                "with a letter or digit)"
            )
        own = f"agent/{agent_id}"
        made = f"mcp-{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"
        return Defaults(
            agent_id=agent_id,
            write=namespaces[0] if namespaces else own,
            read=tuple(dict.fromkeys([own, *namespaces, "global"])),
            session_id=session_id or made,
        )


# ---- errors, in the terms of the tool the model called
_PLAIN: dict[grpc.StatusCode, tuple[str, str]] = {
    grpc.StatusCode.INVALID_ARGUMENT: ("an argument was refused", "Fix it and call again."),
    grpc.StatusCode.OUT_OF_RANGE: ("an argument was refused", "Fix it and call again."),
    grpc.StatusCode.PERMISSION_DENIED: (
        "not allowed for this agent",
        "Use one of your own namespaces (leave namespace empty for the default).",
    ),
    grpc.StatusCode.NOT_FOUND: (
        "not found",
        "Ids come from the results of remember, recall, timeline or list_proposals.",
    ),
    grpc.StatusCode.UNAUTHENTICATED: (
        "the memory server could not sign in to the gateway",
        "This is a setup problem (API key): tell the user; retrying will not help.",
    ),
    grpc.StatusCode.ABORTED: ("it conflicts with a change made meanwhile", "Call again."),
    grpc.StatusCode.ALREADY_EXISTS: ("it conflicts with a change made meanwhile", "Call again."),
    grpc.StatusCode.FAILED_PRECONDITION: ("not possible in the current state", ""),
    grpc.StatusCode.UNAVAILABLE: (
        "the memory gateway is unreachable",
        "Try again in a moment; nothing was changed.",
    ),
    grpc.StatusCode.DEADLINE_EXCEEDED: (
        "the memory gateway took too long",
        "Try again in a moment (a write with the same idempotency_key is stored once).",
    ),
    grpc.StatusCode.RESOURCE_EXHAUSTED: (
        "the memory gateway is busy",
        "Wait a few seconds and call again.",
    ),
}
#: the gateway's RPC names, as the tools a model sees
_TOOL_OF_RPC = {
    "AppendTurn": "append_turn",
    "AppendTurns": "append_turn",
    "ProposeFact": "propose_fact",
    "EndSession": "end_session",
    "SubmitResult": "submit_result",
    "MatchSkill": "match_skill",
    "BatchWrite": "remember",
    "Write": "remember",
    "Recall": "recall",
    "Forget": "forget",
    "Timeline": "timeline",
}
_RPC_NAMES = re.compile(r"\b(" + "|".join(_TOOL_OF_RPC) + r")\b")


#: the gateway's client-facing phrases, as a model reads them
_REWORDED = {
    " (or is not applied yet: write with wait)": " (or was written a moment ago)",
    "x-agent-id": "agent id",
}


def refusal(error: GatewayError) -> str:
    """A gateway refusal as a model reads it: what went wrong, the gateway's reason (with RPC
    names turned into tool names), then what to do."""
    what, todo = _PLAIN.get(error.code, ("the memory gateway refused the call", ""))
    reason = _RPC_NAMES.sub(lambda m: _TOOL_OF_RPC[m.group(1)], error.message.strip())
    for internal, plain in _REWORDED.items():
        reason = reason.replace(internal, plain)
    reason = reason.rstrip(".")
    return f"{what}: {reason}." + (f" {todo}" if todo else "")


def invalid_arguments(error: ValidationError) -> str:
    """A schema violation as one line per argument (no pydantic dump, no URL)."""
    parts = []
    for e in error.errors():
        where = ".".join(str(p) for p in e["loc"]) or "arguments"
        msg = e["msg"]
        if e["type"] == "missing":
            msg = "is required"
        elif e["type"] == "extra_forbidden":
            msg = "is not a parameter of this tool"
        parts.append(f"'{where}' {msg}")
    return "invalid arguments: " + "; ".join(parts) + ". See the tool's input schema."


async def gateway_call(call: Awaitable[T]) -> T:
    """Await a gateway call; a refusal becomes an MCP tool error phrased for the model."""
    try:
        return await call
    except GatewayError as error:
        raise ToolError(refusal(error)) from None


class MemgateMCP(MCPServer[Any]):
    """``MCPServer`` whose argument errors read as one line per argument."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(
                    f"Error executing tool {name}: {invalid_arguments(exc.__cause__)}"
                ) from exc.__cause__
            raise


# ---- argument types: what the schema tells the model
_WRITE_TO = (
    "Where it goes: 'user/<id>' (about one user, shared), 'agent/<your id>' (private to you), "
    "'task/<id>' (one task) or 'global' (shared rules)."
)


def _namespace_field(d: Defaults, what: str = _WRITE_TO) -> Any:
    return Field(
        None,
        description=f"{what} Leave empty for '{d.write}'. A sub-agent's write to a shared "
        "namespace becomes a proposal for the master.",
        examples=[d.write],
        max_length=140,
    )


SESSION_NS = (
    "The namespace the conversation is kept in, e.g. 'user/alice' (the user it is with) or "
    "'agent/<your id>'."
)
FACT_NS = "Whose fact: 'user/<id>' for a fact about a user, 'agent/<your id>' for your own."


def _namespaces_field(d: Defaults, what: str = "search") -> Any:
    return Field(
        None,
        description=f"Namespaces to {what}. Leave empty for all of yours: "
        f"{', '.join(d.read)}. You may read your own 'agent/<id>' and the shared user/, "
        "task/ and global ones.",
        examples=[list(d.read)],
        max_length=32,
    )


def _session_field(d: Defaults, what: str) -> Any:
    return Field(
        None,
        description=f"{what} Leave empty for this conversation's session ('{d.session_id}').",
        examples=["s-2024-06-01"],
        max_length=128,
    )


IdempotencyKey = Annotated[
    str | None,
    Field(
        description="Optional: send the same key when you retry a call that timed out, and "
        "the write is stored once. Leave empty otherwise.",
        examples=["remember-alice-diet-1"],
        max_length=128,
    ),
]
Layer = Literal["semantic", "episodic", "procedural"]
ProposalId = Annotated[
    str,
    Field(
        description="The proposal's id, from list_proposals.", examples=["p-01J2…"], min_length=1
    ),
]
Reason = Annotated[
    str,
    Field(description="Why, for the audit trail.", examples=["the user confirmed it"]),
]


class MemoryUpdate(BaseModel):
    """One memory a sub-agent hands back with its result."""

    content: Annotated[
        str,
        Field(
            description="The memory, one self-contained statement.",
            examples=["The user's company uses Salesforce"],
            min_length=1,
        ),
    ]
    namespace: Annotated[
        str | None,
        Field(
            description="Where it goes, e.g. 'user/alice'; empty: the server's default.",
            examples=["user/alice"],
        ),
    ] = None
    layer: Annotated[
        Layer,
        Field(description="'semantic' (fact), 'episodic' (event) or 'procedural' (how-to)."),
    ] = "semantic"
    importance: Annotated[
        float | None, Field(ge=0.0, le=1.0, description="0..1; empty: scored by the gateway.")
    ] = None


# ---- results: what a model uses
def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def why(hit: types.Hit) -> str:
    """Why a recall hit matched, in words."""
    reasons = []
    if hit.keyword > 0:
        reasons.append("shares words with the query")
    if hit.similarity >= 0.3:
        reasons.append(f"close in meaning ({hit.similarity:.2f})")
    elif hit.similarity > 0:
        reasons.append(f"loosely related ({hit.similarity:.2f})")
    if hit.layer == "working":
        reasons.append("said in this session")
    elif hit.recency >= 0.5:
        reasons.append("recent")
    if hit.slot:
        reasons.append(f"the current fact for {hit.slot}")
    return "; ".join(reasons) or "ranked by the gateway"


def slim_hit(hit: types.Hit) -> dict[str, Any]:
    return {
        "id": hit.id,
        "content": hit.content,
        "when": _iso(hit.event_time or hit.created_at),
        "layer": hit.layer,
        "namespace": hit.namespace,
        "why": why(hit),
    }


def write_outcome(result: types.WriteResult) -> dict[str, Any]:
    if result.quarantined:
        outcome = "quarantined: it reads like an instruction to an AI, kept for human review"
    elif result.proposal_id:
        outcome = "proposed: the master decides whether it is stored"
    elif result.duplicate:
        outcome = "already known: the memory it repeats was updated"
    elif result.id:
        outcome = "stored"
    else:
        outcome = f"not stored: {result.skipped or 'the gateway skipped it'}"
    out: dict[str, Any] = {"id": result.id, "outcome": outcome}
    if result.proposal_id:
        out["proposal_id"] = result.proposal_id
    if result.redactions:
        out["redacted"] = result.redactions
    return out


def slim_proposal(p: types.Proposal) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": p.id,
        "from_agent": p.proposer,
        "namespace": p.item.namespace,
        "layer": p.item.layer,
        "content": p.item.content,
        "when": _iso(p.created_at),
        "state": p.state,
    }
    if p.conflicts_with is not None:
        out["replaces"] = {"id": p.conflicts_with.id, "content": p.conflicts_with.content}
    if p.memory_id:
        out["memory_id"] = p.memory_id
    return out


def slim_event(e: types.Event) -> dict[str, Any]:
    return {"id": e.id, "when": _iso(e.at), "what": e.summary, "type": e.type}


class Bridge:
    """The MCP server's one gateway client, opened when the server starts, closed when it
    stops (on the server's own event loop, as grpc.aio requires)."""

    def __init__(
        self, target: str, agent_id: str, api_key: str | None, tls: dict[str, Any] | None = None
    ) -> None:
        self.target, self.agent_id, self.api_key = target, agent_id, api_key
        self.tls = {k: v for k, v in (tls or {}).items() if v is not None}
        self._client: GatewayClient | None = None

    @property
    def client(self) -> GatewayClient:
        if self._client is None:
            raise ToolError("the memory server is still connecting to the gateway: call again")
        return self._client

    @asynccontextmanager
    async def lifespan(self, _: MCPServer[Any]) -> AsyncIterator[None]:
        self._client = GatewayClient(
            self.target, agent_id=self.agent_id, api_key=self.api_key, **self.tls
        )
        try:
            yield None
        finally:
            await self._client.close()
            self._client = None


def build_server(
    target: str,
    agent_id: str,
    api_key: str | None = None,
    *,
    master_agent: str = "master",
    tls: dict[str, Any] | None = None,
    namespaces: Sequence[str] = (),
    session_id: str | None = None,
) -> MCPServer[Any]:
    """The MCP server for one agent; the master also gets the arbitration tools. ``namespaces``:
    the ``--namespace`` values (writes default to the first, reads to all plus the agent's own
    and ``global``); ``session_id``: the default session (default: one made now). ``tls``: the
    client's TLS arguments (``root_certificates``, ``certificate_chain``, ``private_key``,
    ``server_name``) for a gateway that serves TLS. Raises ``ValueError`` on a bad namespace
    or session id."""
    defaults = Defaults.of(agent_id, namespaces, session_id)
    bridge = Bridge(target, agent_id, api_key, tls)
    server = MemgateMCP(
        "memgate",
        instructions=(
            f"Long-term and working memory for agent '{agent_id}' through a memgate gateway. "
            "Call `recall` before answering questions that may depend on what was said or "
            "learned before; call `remember` for durable facts, preferences and decisions; "
            "call `append_turn` to keep the conversation window. Namespaces and session ids "
            f"are optional everywhere: writes go to '{defaults.write}', searches cover "
            f"{', '.join(defaults.read)}; this conversation's session is "
            f"'{defaults.session_id}'."
        ),
        lifespan=bridge.lifespan,
    )
    add_memory_tools(server, bridge, defaults)
    add_session_tools(server, bridge, defaults)
    add_agent_tools(server, bridge, defaults)
    if agent_id == master_agent:
        add_master_tools(server, bridge)
    add_timeline_resources(server, bridge)
    return server


def tool(server: MCPServer[Any], annotations: ToolAnnotations) -> Callable[[Any], Any]:
    """Registers a tool with its docstring on one line (as the model reads it)."""

    def register(fn: Any) -> Any:
        text = " ".join(inspect.cleandoc(fn.__doc__ or "").split())
        return server.tool(annotations=annotations, description=text)(fn)

    return register


READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
DESTROYS = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)


def add_memory_tools(server: MCPServer[Any], bridge: Bridge, d: Defaults) -> None:
    @tool(server, WRITES)
    async def remember(
        content: Annotated[
            str,
            Field(
                description="The memory: one self-contained statement.",
                examples=["Alice is vegetarian"],
                min_length=1,
                max_length=8000,
            ),
        ],
        namespace: str | None = _namespace_field(d),
        layer: Annotated[
            Layer,
            Field(
                description="'semantic' for facts and preferences, 'episodic' for something "
                "that happened, 'procedural' for how to do something.",
                examples=["semantic"],
            ),
        ] = "semantic",
        importance: Annotated[
            float | None,
            Field(
                ge=0.0,
                le=1.0,
                description="How much it matters, 0..1; leave empty to let the gateway score it.",
                examples=[0.8],
            ),
        ] = None,
        type: Annotated[
            str,
            Field(description="Optional label.", examples=["preference"], max_length=64),
        ] = "",
        entities: Annotated[
            list[str],
            Field(
                description="Optional: people, places, things it is about.",
                examples=[["Alice"]],
                max_length=32,
            ),
        ] = [],  # noqa: B006 - pydantic copies defaults
        idempotency_key: IdempotencyKey = None,
    ) -> dict[str, Any]:
        """Store a long-term memory. Returns its `id` and the `outcome` (stored, already known,
        proposed, quarantined); secrets and personal data are redacted (`redacted` lists what).
        A sub-agent writing to a shared namespace gets a `proposal_id`: the master decides."""
        result = await gateway_call(
            bridge.client.write_result(
                namespace or d.write,
                layer,
                content,
                wait=True,
                importance=importance,
                type=type,
                session_id=d.session_id,
                entities=entities,
                idempotency_key=idempotency_key,
            )
        )
        return write_outcome(result)

    @tool(server, READ_ONLY)
    async def recall(
        query: Annotated[
            str,
            Field(
                description="What you want to know, in plain words.",
                examples=["what does Alice eat?"],
                min_length=1,
                max_length=2000,
            ),
        ],
        namespaces: list[str] | None = _namespaces_field(d),  # noqa: B008
        top_k: Annotated[
            int, Field(ge=1, le=50, description="How many hits at most.", examples=[5])
        ] = 5,
        layers: Annotated[
            list[Literal["working", "episodic", "semantic", "procedural"]],
            Field(
                description="Optional: only these layers; empty lets the gateway choose.",
                examples=[["semantic", "episodic"]],
            ),
        ] = [],  # noqa: B006
        session_id: str | None = _session_field(d, "Whose conversation window to search too."),
    ) -> dict[str, Any]:
        """Search memory. Returns `memory_block` (ready to put in your context, best first) and
        `hits` (id, content, when, layer, namespace, why it matched); pass a hit's id to
        `forget`."""
        result = await gateway_call(
            bridge.client.recall(
                query,
                list(namespaces or d.read),
                top_k,
                list(layers),
                session_id=session_id or d.session_id,
            )
        )
        return {"memory_block": result.memory_block, "hits": [slim_hit(h) for h in result.hits]}

    @tool(server, DESTROYS)
    async def forget(
        memory_id: Annotated[
            str,
            Field(
                description="The id from `remember` or a `recall` hit.",
                examples=["01J2Z8…"],
                min_length=1,
                max_length=128,
            ),
        ],
        reason: Reason = "",
    ) -> dict[str, Any]:
        """Forget a memory at once: it no longer comes back from `recall`. Use when the user
        asks you to forget something or a memory is wrong."""
        memory = await gateway_call(bridge.client.forget(memory_id, reason))
        return {"id": memory.id, "forgotten": memory.status == "forgotten"}

    @tool(server, READ_ONLY)
    async def timeline(
        namespace: str | None = Field(  # noqa: B008
            None,
            description=f"Whose events, e.g. '{d.write}'. Leave empty for '{d.write}'.",
            examples=[d.write],
            max_length=140,
        ),
        limit: Annotated[
            int, Field(ge=1, le=TIMELINE_LIMIT, description="How many events.", examples=[20])
        ] = 20,
        since: Annotated[
            datetime | None,
            Field(
                description="Optional: only events from then on (ISO 8601 with a zone).",
                examples=["2024-06-01T00:00:00Z"],
            ),
        ] = None,
    ) -> dict[str, Any]:
        """What happened, in time order (oldest first): the namespace's events, each with its
        id, when and what. Use for "what did we do last week?" rather than `recall`."""
        ns = namespace or d.write
        events = await gateway_call(bridge.client.timeline(ns, start=since, limit=limit))
        return {"namespace": ns, "events": [slim_event(e) for e in events]}


def add_session_tools(server: MCPServer[Any], bridge: Bridge, d: Defaults) -> None:
    @tool(server, WRITES)
    async def append_turn(
        content: Annotated[
            str,
            Field(
                description="The turn's text.",
                examples=["I'm vegetarian, by the way"],
                min_length=1,
                max_length=8000,
            ),
        ],
        role: Annotated[
            Literal["user", "assistant", "system", "tool"],
            Field(description="Who said it.", examples=["user"]),
        ] = "user",
        namespace: str | None = _namespace_field(d, SESSION_NS),
        session_id: str | None = _session_field(d, "The conversation the turn belongs to."),
        zone: Annotated[
            Literal["instructions", "task", "dialogue", "scratch"],
            Field(
                description="'dialogue' for the conversation (rolled and summarised when "
                "long), 'instructions' for standing orders (never rolled), 'task' for the "
                "current goal, 'scratch' for tool output you may clear.",
                examples=["dialogue"],
            ),
        ] = "dialogue",
        at: Annotated[
            datetime | None,
            Field(
                description="When the turn was said, ISO 8601 with a zone (default: now). Set it "
                "when importing a past conversation, so 'yesterday' means the day before it.",
                examples=["2024-06-01T09:30:00Z"],
            ),
        ] = None,
        idempotency_key: IdempotencyKey = None,
    ) -> dict[str, Any]:
        """Add a turn to the conversation window (working memory), which `recall` searches
        and `end_session` mines for lasting facts."""
        result = await gateway_call(
            bridge.client.append_turn(
                namespace or d.write,
                session_id or d.session_id,
                role=role,
                content=content,
                zone=zone,
                idempotency_key=idempotency_key,
                at=at,
            )
        )
        if result.quarantined:
            outcome = "quarantined: it reads like an instruction to an AI, not added"
        elif result.proposal_id:
            outcome = "proposed: the master decides whether it is added"
        else:
            outcome = "already added" if result.duplicate else "added"
        out: dict[str, Any] = {
            "turn_id": result.id,
            "outcome": outcome,
            "turns_in_window": result.dialogue_length,
            "summarised_older_turns": result.compacted,
        }
        if result.redactions:
            out["redacted"] = result.redactions
        return out

    @tool(server, WRITES)
    async def end_session(
        namespace: str | None = _namespace_field(d, SESSION_NS),
        session_id: str | None = _session_field(d, "The conversation to close."),
    ) -> dict[str, Any]:
        """Close a conversation: the gateway mines its new turns for stable facts
        (preferences, attributes, constraints) in the background; a fact seen in two sessions,
        or said with "remember", becomes a long-term memory. Safe to call more than once."""
        result = await gateway_call(
            bridge.client.end_session(namespace or d.write, session_id or d.session_id)
        )
        return {
            "turns_to_mine": result.turns,
            "job_id": result.job_id,
            "already_ended": result.duplicate,
        }


def add_agent_tools(server: MCPServer[Any], bridge: Bridge, d: Defaults) -> None:
    @tool(server, WRITES)
    async def propose_fact(
        fact: Annotated[
            str,
            Field(
                description="The fact, one statement.",
                examples=["Prefers replies in English"],
                min_length=1,
                max_length=2000,
            ),
        ],
        namespace: str | None = _namespace_field(d, FACT_NS),
        session_id: str | None = _session_field(d, "The conversation it was inferred from."),
        evidence: Annotated[
            list[str],
            Field(
                description="What was said that shows it (quotes).",
                examples=[["please answer in English"]],
                max_length=16,
            ),
        ] = [],  # noqa: B006
        confidence: Annotated[
            float,
            Field(ge=0.0, le=1.0, description="How sure you are, 0..1.", examples=[0.7]),
        ] = 0.5,
        explicit: Annotated[
            bool,
            Field(
                description="True when the user stated it outright: stored at once.",
                examples=[False],
            ),
        ] = False,
    ) -> dict[str, Any]:
        """Propose a fact you inferred. It becomes a long-term memory once seen in two
        sessions (or at once when explicit); until then it is pending."""
        result = await gateway_call(
            bridge.client.propose_fact(
                namespace or d.write,
                fact,
                session_id=session_id or d.session_id,
                evidence=evidence,
                confidence=confidence,
                explicit=explicit,
            )
        )
        out: dict[str, Any] = {"stored": result.promoted, "sessions_seen": result.sessions_seen}
        out["memory_id" if result.promoted else "pending_id"] = (
            result.memory_id if result.promoted else result.pending_id
        )
        return out

    @tool(server, WRITES)
    async def submit_result(
        task_id: Annotated[
            str,
            Field(
                description="The task you were given.",
                examples=["t-42"],
                min_length=1,
                max_length=128,
            ),
        ],
        status: Annotated[
            Literal["done", "failed", "partial"],
            Field(description="How it went.", examples=["done"]),
        ],
        summary: Annotated[
            str,
            Field(
                description="What you did and found, briefly.",
                examples=["Compared three vendors; B is cheapest"],
                min_length=1,
                max_length=8000,
            ),
        ],
        artifacts: Annotated[
            list[str],
            Field(description="Files or links made.", examples=[["report.md"]], max_length=64),
        ] = [],  # noqa: B006
        decisions: Annotated[
            list[str],
            Field(description="Decisions taken.", examples=[["pick vendor B"]], max_length=64),
        ] = [],  # noqa: B006
        memory_updates: Annotated[
            list[MemoryUpdate],
            Field(
                description="Memories to keep: stored directly where you may write, proposed to "
                "the master for shared namespaces.",
                examples=[[{"content": "The user's company uses Salesforce"}]],
                max_length=64,
            ),
        ] = [],  # noqa: B006
        idempotency_key: IdempotencyKey = None,
    ) -> dict[str, Any]:
        """Hand a sub-agent's result back to the master: recorded as an event of the task;
        a retried submission with the same key stores nothing new."""
        updates = [
            {**u.model_dump(exclude_none=True), "namespace": u.namespace or d.write}
            for u in memory_updates
        ]
        result = await gateway_call(
            bridge.client.submit_result(
                task_id,
                status=status,
                summary=summary,
                artifacts=artifacts,
                decisions=decisions,
                memory_updates=updates,
                session_id=d.session_id,
                idempotency_key=idempotency_key,
            )
        )
        return {
            "event_id": result.event_id,
            "stored": [w.id for w in result.committed if w.id],
            "proposed": [p.id for p in result.proposals],
        }

    @tool(server, READ_ONLY)
    async def match_skill(
        intent: Annotated[
            str,
            Field(
                description="What you want to do, in plain words.",
                examples=["save a web page as markdown"],
                min_length=1,
                max_length=2000,
            ),
        ],
        namespaces: list[str] | None = _namespaces_field(d, "look for skills in"),  # noqa: B008
        top_k: Annotated[
            int, Field(ge=1, le=20, description="How many skills at most.", examples=[3])
        ] = 3,
    ) -> dict[str, Any]:
        """Find registered skills (procedures, tools) that fit an intent, best first, with
        their entry point and parameter schema."""
        matches = await gateway_call(
            bridge.client.match_skill(intent, list(namespaces or d.read), top_k)
        )
        return {
            "matches": [
                {
                    "name": m.skill.name,
                    "description": m.skill.description,
                    "entry_point": m.skill.entry_point,
                    "parameter_schema": m.skill.parameter_schema,
                    "namespace": m.skill.namespace,
                    "score": round(m.score, 3),
                }
                for m in matches
            ]
        }


def add_master_tools(server: MCPServer[Any], bridge: Bridge) -> None:
    @tool(server, READ_ONLY)
    async def list_proposals(
        state: Annotated[
            Literal["pending", "approved", "rejected"],
            Field(description="Which proposals.", examples=["pending"]),
        ] = "pending",
        limit: Annotated[
            int, Field(ge=1, le=200, description="How many at most.", examples=[20])
        ] = 20,
    ) -> dict[str, Any]:
        """(Master) Sub-agents' writes to shared namespaces waiting for your decision, each
        with what it would replace; then `approve` or `reject` by id."""
        proposals = await gateway_call(bridge.client.proposals(state, limit))
        return {"proposals": [slim_proposal(p) for p in proposals]}

    @tool(server, WRITES)
    async def approve(proposal_id: ProposalId, reason: Reason = "") -> dict[str, Any]:
        """(Master) Commit a proposal: it becomes a memory (`memory_id`)."""
        p = await gateway_call(bridge.client.approve(proposal_id, reason))
        return {"proposal_id": p.id, "state": p.state, "memory_id": p.memory_id}

    @tool(server, WRITES)
    async def reject(proposal_id: ProposalId, reason: Reason = "") -> dict[str, Any]:
        """(Master) Turn a proposal down: nothing is stored."""
        p = await gateway_call(bridge.client.reject(proposal_id, reason))
        return {"proposal_id": p.id, "state": p.state}


def add_timeline_resources(server: MCPServer[Any], bridge: Bridge) -> None:
    async def timeline(namespace: str) -> str:
        try:
            events = await bridge.client.timeline(namespace, limit=TIMELINE_LIMIT)
        except GatewayError as error:
            raise ResourceError(refusal(error)) from None
        body = {"namespace": namespace, "events": [slim_event(e) for e in events]}
        return json.dumps(body, ensure_ascii=False)

    @server.resource(
        "memgate://timeline/{kind}/{id}",
        name="timeline",
        description=f"The last {TIMELINE_LIMIT} events of namespace <kind>/<id> (kind: user, "
        "agent or task), oldest first, as JSON (what the timeline tool returns).",
        mime_type="application/json",
    )
    async def namespace_timeline(kind: str, id: str) -> str:
        return await timeline(f"{kind}/{id}")

    @server.resource(
        "memgate://timeline/global",
        name="global-timeline",
        description=f"The last {TIMELINE_LIMIT} events of the global namespace, as JSON.",
        mime_type="application/json",
    )
    async def global_timeline() -> str:
        return await timeline("global")


# ---- running it
def serve_stdio(server: MCPServer[Any]) -> None:
    server.run("stdio")


class BearerAuth:
    """ASGI middleware: an HTTP request without ``Authorization: Bearer <token>`` gets 401 and
    never reaches the MCP server (which acts as the configured agent, with its key)."""

    def __init__(self, app: Any, token: str) -> None:
        self._app = app
        self._expected = token.encode()

    def _token_of(self, header: bytes) -> bytes:
        """The credentials of ``Authorization: Bearer <token>``: the scheme is case-insensitive
        (RFC 7235; "bearer" was refused), surrounding blanks ignored."""
        scheme, _, credentials = header.strip().partition(b" ")
        return credentials.strip() if scheme.lower() == b"bearer" else b""

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = self._token_of(dict(scope.get("headers") or ()).get(b"authorization", b""))
            if not given or not hmac.compare_digest(given, self._expected):
                body = json.dumps(
                    {
                        "error": "unauthorized: send Authorization: Bearer <the token memgate mcp "
                        "was started with (MEMGATE_MCP_TOKEN, --token-file, or the file it "
                        "printed the path of)>"
                    }
                ).encode()
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"www-authenticate", b"Bearer"),
                            (b"content-length", str(len(body)).encode()),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self._app(scope, receive, send)


def serve_http(
    server: MCPServer[Any],
    host: str,
    port: int,
    announce: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True),
    token: str | None = None,
) -> None:
    """Streamable HTTP at http://HOST:PORT/mcp; port 0 picks a free one (announced). With
    ``token`` every request must carry it as a bearer token (None: no authentication — the
    caller allows that on loopback only)."""
    import uvicorn

    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)  # connections wait in the backlog until uvicorn accepts them
    bound = sock.getsockname()[1]
    app: Any = server.streamable_http_app(host=host)
    if token is not None:
        app = BearerAuth(app, token)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    announce(f"memgate mcp: streamable HTTP on http://{host}:{bound}/mcp")
    anyio.run(lambda: uvicorn.Server(config).serve(sockets=[sock]))
