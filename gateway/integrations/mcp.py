"""``memgate mcp``: an MCP server (official ``mcp`` SDK) that gives an agent in an MCP host its
memory through a running gateway.

It is a client of the gateway — the asyncio ``gateway.client.aio.GatewayClient`` under one agent id —
and runs no store of its own, so the gateway's namespaces, authorization and screening apply to
every tool call unchanged. A call the gateway refuses comes back as an MCP tool error that starts
with the gRPC status (``PERMISSION_DENIED: …``) followed by the gateway's reason.

Tools: ``remember``, ``recall``, ``forget``, ``append_turn``, ``end_session``, ``propose_fact``,
``submit_result``, ``match_skill``; for the master also ``list_proposals``, ``approve`` and
``reject``. Resources: ``memgate://timeline/global`` and ``memgate://timeline/{kind}/{id}``, a
namespace's recent events. Transports: stdio (what a desktop or IDE host launches) and
streamable HTTP (bound to 127.0.0.1 unless told otherwise).
"""

from __future__ import annotations

import dataclasses
import hmac
import json
import socket
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Annotated, Any, Literal, TypeVar

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from pydantic import BaseModel, Field

from gateway.client import GatewayError
from gateway.client.aio import GatewayClient

T = TypeVar("T")


# ---- argument types: what the schema tells the model
Namespace = Annotated[
    str,
    Field(
        description="Where the memory lives: 'user/<id>' (facts about one user, shared), "
        "'agent/<your agent id>' (private to you), 'task/<id>' (one task) or 'global' (shared "
        "rules). A sub-agent's write to a shared namespace becomes a proposal for the master."
    ),
]
Namespaces = Annotated[
    list[str],
    Field(
        min_length=1,
        description="Namespaces to search, e.g. ['user/alice', 'global']; you may only read "
        "your own 'agent/<id>' and the shared ones.",
    ),
]
SessionId = Annotated[str, Field(description="The conversation/session id, e.g. 's-2024-06-01'.")]
Layer = Literal["semantic", "episodic", "procedural"]
IdempotencyKey = Annotated[
    str | None,
    Field(
        description="Optional: the same key on a retry stores the write once; leave empty "
        "to have one made up."
    ),
]


class MemoryUpdate(BaseModel):
    """One memory a sub-agent hands back with its result."""

    namespace: Namespace
    layer: Layer = "semantic"
    content: Annotated[str, Field(description="The memory, one self-contained statement.")]
    importance: Annotated[float | None, Field(ge=0.0, le=1.0)] = None


def plain(value: Any) -> Any:
    """The client's dataclasses as JSON-ready values (datetimes as ISO 8601)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def refusal(error: GatewayError) -> str:
    """``STATUS: what the gateway said`` — the text an MCP tool error carries."""
    return f"{error.code.name}: {error.message}"


async def gateway_call(call: Awaitable[T]) -> T:
    """Await a gateway call; a refusal becomes an MCP tool error with the gRPC reason."""
    try:
        return await call
    except GatewayError as error:
        raise ToolError(refusal(error)) from None


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
            raise ToolError("UNAVAILABLE: the MCP server has not connected to the gateway yet")
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
) -> MCPServer[Any]:
    """The MCP server for one agent; the master also gets the arbitration tools. ``tls``: the
    client's TLS arguments (``root_certificates``, ``certificate_chain``, ``private_key``,
    ``server_name``) for a gateway that serves TLS."""
    bridge = Bridge(target, agent_id, api_key, tls)
    server: MCPServer[Any] = MCPServer(
        "memgate",
        instructions=(
            f"Long-term and working memory for agent '{agent_id}' through a memgate gateway. "
            "Call `recall` before answering questions that may depend on what was said or "
            "learned before; call `remember` for durable facts, preferences and decisions; "
            "call `append_turn` to keep the conversation window."
        ),
        lifespan=bridge.lifespan,
    )
    add_memory_tools(server, bridge)
    add_agent_tools(server, bridge)
    if agent_id == master_agent:
        add_master_tools(server, bridge)
    add_timeline_resources(server, bridge)
    return server


def add_memory_tools(server: MCPServer[Any], bridge: Bridge) -> None:
    @server.tool()
    async def remember(
        content: Annotated[
            str,
            Field(
                description="The memory: one self-contained statement, e.g. 'Alice is vegetarian'."
            ),
        ],
        namespace: Namespace,
        layer: Annotated[
            Layer,
            Field(
                description="'semantic' for facts and preferences, 'episodic' for something "
                "that happened, 'procedural' for how to do something."
            ),
        ] = "semantic",
        importance: Annotated[
            float | None,
            Field(ge=0.0, le=1.0, description="0..1; leave empty to let the gateway score it."),
        ] = None,
        type: Annotated[str, Field(description="Optional label, e.g. 'preference'.")] = "",
        session_id: Annotated[str, Field(description="Optional: the session it came from.")] = "",
        entities: Annotated[
            list[str], Field(description="Optional: people, places, things it is about.")
        ] = [],  # noqa: B006 - pydantic copies defaults
        idempotency_key: IdempotencyKey = None,
    ) -> dict[str, Any]:
        """Store a long-term memory. Returns its id; a near-duplicate updates the memory it
        repeats; secrets and PII are redacted, injected instructions quarantined. In a shared
        namespace a sub-agent gets a `proposal_id` instead of an id: the master decides."""
        result = await gateway_call(
            bridge.client.write_result(
                namespace,
                layer,
                content,
                wait=True,
                importance=importance,
                type=type,
                session_id=session_id,
                entities=entities,
                idempotency_key=idempotency_key,
            )
        )
        return plain(result)

    @server.tool()
    async def recall(
        query: Annotated[str, Field(description="What you want to know, in plain words.")],
        namespaces: Namespaces,
        top_k: Annotated[int, Field(ge=1, le=100, description="How many hits at most.")] = 5,
        layers: Annotated[
            list[Literal["working", "episodic", "semantic", "procedural"]],
            Field(description="Optional: only these layers; empty lets the gateway route."),
        ] = [],  # noqa: B006
        token_budget: Annotated[
            int, Field(ge=0, description="Optional: tokens the memory block may use (0: default).")
        ] = 0,
        session_id: Annotated[
            str, Field(description="Optional: also search this session's working window.")
        ] = "",
    ) -> dict[str, Any]:
        """Search memory. Returns `memory_block` (ready to put in your context, best first,
        within the token budget) and `hits` (id, content, score, layer, namespace) for
        follow-up calls such as `forget`."""
        result = await gateway_call(
            bridge.client.recall(
                query,
                namespaces,
                top_k,
                list(layers),
                token_budget=token_budget,
                session_id=session_id,
            )
        )
        return plain(result)

    @server.tool()
    async def forget(
        memory_id: Annotated[str, Field(description="The id from `remember` or a recall hit.")],
        reason: Annotated[str, Field(description="Why, for the audit trail.")] = "",
    ) -> dict[str, Any]:
        """Forget a memory at once: it no longer comes back from `recall`. Use when the user
        asks you to forget something or a memory is wrong."""
        memory = await gateway_call(bridge.client.forget(memory_id, reason))
        return {"id": memory.id, "status": memory.status, "namespace": memory.namespace}

    @server.tool()
    async def append_turn(
        namespace: Namespace,
        session_id: SessionId,
        role: Literal["user", "assistant", "system", "tool"],
        content: Annotated[str, Field(description="The turn's text.")],
        zone: Annotated[
            Literal["instructions", "task", "dialogue", "scratch"],
            Field(
                description="'dialogue' for the conversation (rolled and summarised when "
                "long), 'instructions' for standing orders (never rolled), 'task' for the "
                "current goal, 'scratch' for tool output you may clear."
            ),
        ] = "dialogue",
        at: Annotated[
            datetime | None,
            Field(
                description="When the turn was said, ISO 8601 with a zone (default: now). Set it "
                "when importing a past conversation, so 'yesterday' means the day before it."
            ),
        ] = None,
        idempotency_key: IdempotencyKey = None,
    ) -> dict[str, Any]:
        """Add a turn to the session's working-memory window."""
        result = await gateway_call(
            bridge.client.append_turn(
                namespace,
                session_id,
                role=role,
                content=content,
                zone=zone,
                idempotency_key=idempotency_key,
                at=at,
            )
        )
        return plain(result)

    @server.tool()
    async def end_session(namespace: Namespace, session_id: SessionId) -> dict[str, Any]:
        """Close a session: the gateway mines its new turns for stable facts (preferences,
        attributes, constraints) in the background; a fact seen in two sessions, or said with
        "remember", becomes a long-term memory. Safe to call more than once."""
        try:
            result = await bridge.client.end_session(namespace, session_id)
        except GatewayError as error:
            raise ToolError(refusal(error)) from None
        return plain(result)


def add_agent_tools(server: MCPServer[Any], bridge: Bridge) -> None:
    @server.tool()
    async def propose_fact(
        namespace: Namespace,
        fact: Annotated[str, Field(description="The fact, e.g. 'Prefers replies in English'.")],
        session_id: SessionId,
        evidence: Annotated[
            list[str], Field(description="What was said that shows it (quotes).")
        ] = [],  # noqa: B006
        confidence: Annotated[float, Field(ge=0.0, le=1.0)] = 0.5,
        explicit: Annotated[
            bool,
            Field(description="True when the user stated it outright: promoted at once."),
        ] = False,
    ) -> dict[str, Any]:
        """Propose a fact you inferred. It becomes a semantic memory once seen in two
        sessions (or at once when explicit); until then it is pending."""
        result = await gateway_call(
            bridge.client.propose_fact(
                namespace,
                fact,
                session_id=session_id,
                evidence=evidence,
                confidence=confidence,
                explicit=explicit,
            )
        )
        return plain(result)

    @server.tool()
    async def submit_result(
        task_id: Annotated[str, Field(description="The task you were given.")],
        status: Literal["done", "failed", "partial"],
        summary: Annotated[str, Field(description="What you did and found, briefly.")],
        artifacts: Annotated[list[str], Field(description="Files or links made.")] = [],  # noqa: B006
        decisions: Annotated[list[str], Field(description="Decisions taken.")] = [],  # noqa: B006
        memory_updates: Annotated[
            list[MemoryUpdate],
            Field(
                description="Memories to keep: written to your own namespace, proposed to "
                "the master for shared ones."
            ),
        ] = [],  # noqa: B006
        session_id: str = "",
        idempotency_key: IdempotencyKey = None,
    ) -> dict[str, Any]:
        """Hand a sub-agent's result back to the master: recorded as an event of the task;
        a retried submission with the same key stores nothing new."""
        result = await gateway_call(
            bridge.client.submit_result(
                task_id,
                status=status,
                summary=summary,
                artifacts=artifacts,
                decisions=decisions,
                memory_updates=[u.model_dump(exclude_none=True) for u in memory_updates],
                session_id=session_id,
                idempotency_key=idempotency_key,
            )
        )
        return plain(result)

    @server.tool()
    async def match_skill(
        intent: Annotated[str, Field(description="What you want to do, in plain words.")],
        namespaces: Annotated[list[str], Field(min_length=1)] = ["global"],  # noqa: B006
        top_k: Annotated[int, Field(ge=1, le=20)] = 3,
    ) -> dict[str, Any]:
        """Find registered skills (procedures, tools) that fit an intent, best first, with
        their entry point and parameter schema."""
        matches = await gateway_call(bridge.client.match_skill(intent, namespaces, top_k))
        return {"matches": plain(matches)}


def add_master_tools(server: MCPServer[Any], bridge: Bridge) -> None:
    @server.tool()
    async def list_proposals(
        state: Literal["pending", "approved", "rejected"] = "pending",
        limit: Annotated[int, Field(ge=1, le=1000)] = 50,
    ) -> dict[str, Any]:
        """(Master) Sub-agents' writes to shared namespaces waiting for a decision."""
        proposals = await gateway_call(bridge.client.proposals(state, limit))
        return {"proposals": plain(proposals)}

    @server.tool()
    async def approve(
        proposal_id: str, reason: Annotated[str, Field(description="Why, for the audit.")] = ""
    ) -> dict[str, Any]:
        """(Master) Commit a proposal: it becomes a memory (`memory_id`)."""
        return plain(await gateway_call(bridge.client.approve(proposal_id, reason)))

    @server.tool()
    async def reject(
        proposal_id: str, reason: Annotated[str, Field(description="Why, for the audit.")] = ""
    ) -> dict[str, Any]:
        """(Master) Turn a proposal down: nothing is stored."""
        return plain(await gateway_call(bridge.client.reject(proposal_id, reason)))


TIMELINE_LIMIT = 50


def add_timeline_resources(server: MCPServer[Any], bridge: Bridge) -> None:
    async def timeline(namespace: str) -> str:
        try:
            events = await bridge.client.timeline(namespace, limit=TIMELINE_LIMIT)
        except GatewayError as error:
            raise ResourceError(refusal(error)) from None
        return json.dumps({"namespace": namespace, "events": plain(events)}, ensure_ascii=False)

    @server.resource(
        "memgate://timeline/{kind}/{id}",
        name="timeline",
        description=f"The last {TIMELINE_LIMIT} events of namespace <kind>/<id> (kind: user, "
        "agent or task), oldest first, as JSON.",
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
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or ()).get(b"authorization", b"")
            if not hmac.compare_digest(given, self._expected):
                body = json.dumps(
                    {
                        "error": "unauthorized: send Authorization: Bearer <the token memgate mcp "
                        "was started with (--token or MEMGATE_MCP_TOKEN)>"
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
