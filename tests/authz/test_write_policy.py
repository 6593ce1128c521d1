"""The write policy, generated from its table (``gateway/core/access/write_policy.py``): every RPC that can
reach a layer is run, per target it can reach, for each caller kind and namespace kind, against
one embedded gateway; the outcome must be the table's cell. Every RPC of the service is either such
a path or declared read/operator, so a new RPC cannot bypass the table (issue 33).

Outcomes: DIRECT (OK, stored), PROPOSAL (OK, queued for the master), DENIED (PERMISSION_DENIED).
``write_policy.MASTER_ONLY`` RPCs answer DENIED to every sub-agent, whatever the row says.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from gateway.core.access import write_policy as wp
from memgate.v1 import memgate_pb2 as pb
from memgate.v1 import memgate_pb2_grpc as pb_grpc
from tests.e2e.conftest import gateway_settings, running_gateway
from tests.tags import fresh_tag

T = wp.Target
MASTER, SUB, OTHER = "master", "wp-sub", "wp-other"
AGENT = {"master": MASTER, "subagent": SUB}
RPCS = {m.name for m in pb.DESCRIPTOR.services_by_name["MemoryGateway"].methods}


class World:
    def __init__(self, address: str) -> None:
        self.channel = grpc.insecure_channel(address)
        self.stub = pb_grpc.MemoryGatewayStub(self.channel)
        self.tasks = {c: f"wp-{c}-{fresh_tag(6)}" for c in AGENT}

    def call(self, agent: str, rpc: str, req: Any) -> Any:
        return getattr(self.stub, rpc)(req, metadata=(("x-agent-id", agent),), timeout=30)

    def namespace(self, caller: str, column: str) -> str:
        agent = AGENT[caller]
        return {
            "own": f"agent/{agent}",
            "others": f"agent/{OTHER}",
            "user": "user/wp",
            "global": "global",
            "task": f"task/{self.tasks[caller]}",
        }[column]

    def event(self, namespace: str) -> str:
        item = pb.WriteItem(namespace=namespace, layer=pb.EPISODIC, content="Met Bob at launch")
        req = pb.RecordEventRequest(event=item, wait=True)
        return str(self.call(MASTER, "RecordEvent", req).result.id)

    def node(self, caller: str, column: str) -> pb.NodeRef:
        """A graph node of the column's namespace: an agent, an event, a task."""
        return {
            "own": pb.NodeRef(kind="agent", id=AGENT[caller]),
            "others": pb.NodeRef(kind="agent", id=OTHER),
            "user": pb.NodeRef(kind="event", id=self.event("user/wp")),
            "global": pb.NodeRef(kind="event", id=self.event("global")),
            "task": pb.NodeRef(kind="task", id=self.tasks[caller]),
        }[column]

    def exported(self, namespace: str) -> Any:
        item = pb.WriteItem(namespace=namespace, layer=pb.SEMANTIC, content="The user likes tea")
        self.call(MASTER, "Write", pb.WriteRequest(item=item, wait=True))
        return next(iter(self.call(MASTER, "Export", pb.ExportRequest(namespaces=[namespace]))))


def memory(ns: str) -> pb.WriteItem:
    return pb.WriteItem(namespace=ns, layer=pb.SEMANTIC, content=f"Tea {fresh_tag(8)}")


def turn(ns: str, steering: bool) -> pb.WriteItem:
    return pb.WriteItem(
        namespace=ns,
        layer=pb.WORKING,
        session_id="wp",
        role="system" if steering else "assistant",
        content=f"Step {fresh_tag(8)} done",
    )


def items(target: wp.Target, ns: str) -> pb.WriteItem:
    return memory(ns) if target is T.MEMORY else turn(ns, target is T.STEERING_TURN)


def submit(w: World, caller: str, item: pb.WriteItem) -> pb.SubmitResultRequest:
    return pb.SubmitResultRequest(
        task_id=w.tasks[caller],
        status="done",
        summary="Booked",
        memory_updates=[pb.MemoryUpdate(item=item)],
    )


Builder = Callable[[World, str, str, str, wp.Target], Any]  # world, caller, column, ns, target
ITEM_TARGETS = (T.MEMORY, T.TURN, T.STEERING_TURN)


def _append(w: World, c: str, col: str, ns: str, t: wp.Target) -> Any:
    role = "system" if t is T.STEERING_TURN else "assistant"
    return pb.AppendTurnRequest(namespace=ns, session_id="wp", role=role, content="Step done")


#: one request per (RPC, target) of ``write_policy.PATHS``
BUILDERS: dict[tuple[str, wp.Target], Builder] = {
    **{
        ("Write", t): lambda w, c, col, ns, t: pb.WriteRequest(item=items(t, ns))
        for t in ITEM_TARGETS
    },
    **{
        ("BatchWrite", t): lambda w, c, col, ns, t: pb.BatchWriteRequest(items=[items(t, ns)])
        for t in ITEM_TARGETS
    },
    **{
        ("SubmitResult", t): lambda w, c, col, ns, t: submit(w, c, items(t, ns))
        for t in ITEM_TARGETS
    },
    ("RecordEvent", T.MEMORY): lambda w, c, col, ns, t: pb.RecordEventRequest(
        event=pb.WriteItem(namespace=ns, layer=pb.EPISODIC, content="Met Bob at the launch")
    ),
    ("RecordEvent", T.GRAPH): lambda w, c, col, ns, t: pb.RecordEventRequest(
        event=pb.WriteItem(
            namespace=f"agent/{AGENT[c]}", layer=pb.EPISODIC, content="Met Bob at the launch"
        ),
        links=[pb.Link(type="ABOUT", target=w.node(c, col))],
    ),
    ("RegisterSkill", T.MEMORY): lambda w, c, col, ns, t: pb.RegisterSkillRequest(
        skill=pb.Skill(name=f"s-{fresh_tag(6)}", description="Books tables", namespace=ns)
    ),
    ("AppendTurn", T.TURN): _append,
    ("AppendTurn", T.STEERING_TURN): _append,
    **{
        ("AppendTurns", t): lambda w, c, col, ns, t: pb.AppendTurnsRequest(
            turns=[_append(w, c, col, ns, t), _append(w, c, col, ns, t)]
        )
        for t in (T.TURN, T.STEERING_TURN)
    },
    ("UpdateSessionState", T.SESSION): lambda w, c, col, ns, t: pb.UpdateSessionStateRequest(
        namespace=ns, session_id="wp", set={"k": "v"}
    ),
    ("CompactWindow", T.SESSION): lambda w, c, col, ns, t: pb.CompactWindowRequest(
        namespace=ns, session_id="wp"
    ),
    ("ClearScratch", T.SESSION): lambda w, c, col, ns, t: pb.ClearScratchRequest(
        namespace=ns, session_id="wp"
    ),
    ("EndSession", T.SESSION): lambda w, c, col, ns, t: pb.EndSessionRequest(
        namespace=ns, session_id="wp"
    ),
    ("Relate", T.GRAPH): lambda w, c, col, ns, t: pb.RelateRequest(
        src=w.node(c, col), type="KNOWS", dst=pb.NodeRef(kind="entity", id="bob")
    ),
    ("Import", T.MEMORY): lambda w, c, col, ns, t: pb.ImportRequest(memories=[w.exported(ns)]),
}


def proposed(rpc: str, resp: Any) -> bool:
    if rpc in ("Write", "RecordEvent"):
        return bool(resp.result.proposal_id)
    if rpc == "BatchWrite":
        return all(r.proposal_id for r in resp.results)
    if rpc == "AppendTurn":
        return bool(resp.proposal_id)
    if rpc == "AppendTurns":
        return all(r.proposal_id for r in resp.results)
    if rpc == "RegisterSkill":
        return not resp.skill.id
    if rpc == "SubmitResult":
        return bool(resp.proposals)
    return False


def outcome(w: World, rpc: str, target: wp.Target, caller: str, column: str) -> str:
    ns = w.namespace(caller, column)
    req = BUILDERS[(rpc, target)](w, caller, column, ns, target)
    try:
        resp = w.call(AGENT[caller], rpc, req)
    except grpc.RpcError as err:
        if err.code() is grpc.StatusCode.PERMISSION_DENIED:
            return "DENIED"
        return f"{err.code().name}: {err.details()}"
    return "PROPOSAL" if proposed(rpc, resp) else "DIRECT"


def expected(rpc: str, target: wp.Target, caller: str, column: str) -> str:
    if rpc in wp.MASTER_ONLY and caller != "master":
        return "DENIED"
    return wp.POLICY[(target, caller, column)].value


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with running_gateway(gateway_settings(tmp_path_factory.mktemp("wp"))) as gw:
        w = World(gw.address)
        for caller, task in w.tasks.items():
            w.call(AGENT[caller], "StartTask", pb.StartTaskRequest(id=task, steps=["a"]))
        try:
            yield w
        finally:
            w.channel.close()


def test_every_rpc_is_a_write_path_or_declared_not_to_write() -> None:
    assert set(wp.PATHS) | wp.READ_OR_OPERATOR == RPCS
    assert not set(wp.PATHS) & wp.READ_OR_OPERATOR
    assert set(wp.PATHS) >= wp.MASTER_ONLY


def test_every_path_and_target_has_a_request() -> None:
    assert set(BUILDERS) == {(rpc, t) for rpc, targets in wp.PATHS.items() for t in targets}


def test_table_is_complete() -> None:
    assert set(wp.POLICY) == {(t, c, col) for t in T for c in wp.CALLERS for col in wp.COLUMNS}


@pytest.mark.parametrize(
    ("rpc", "target"), sorted(BUILDERS), ids=[f"{r}-{t.value}" for r, t in sorted(BUILDERS)]
)
def test_write_policy_matrix(world: World, rpc: str, target: wp.Target) -> None:
    cells = [(c, col) for c in wp.CALLERS for col in wp.COLUMNS]
    got = {cell: outcome(world, rpc, target, *cell) for cell in cells}
    want = {cell: expected(rpc, target, *cell) for cell in cells}
    wrong = {k: f"got {got[k]}, want {want[k]}" for k in cells if got[k] != want[k]}
    assert not wrong, f"{rpc} {target.value}: {wrong}"


def test_docs_table_matches() -> None:
    """docs/SECURITY.md "Write policy" holds ``write_policy.TABLE`` (as markdown), cell for cell."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "SECURITY.md").read_text()
    section = text.split("### Write policy", 1)[1].split("\n#", 1)[0]
    rows = [
        tuple(c.strip().strip("`") for c in line.strip().strip("|").split("|"))
        for line in section.splitlines()
        if line.startswith("| ") and not line.startswith("| target")
    ]
    assert rows == [tuple(line.split()) for line in wp.TABLE.strip().splitlines()]
