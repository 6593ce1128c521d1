"""The one write policy (issue 33): what a write does, per target (the layer or part of it it
reaches), caller kind and namespace kind. Every path that can reach a layer asks ``decide`` (or
``require``): Write, BatchWrite, RecordEvent (and its links), SubmitResult's memory updates,
RegisterSkill, ProposeFact's promotion, Import, AppendTurn, UpdateSessionState, CompactWindow,
ClearScratch, EndSession and Relate. ``TABLE`` is the policy; docs/SECURITY.md repeats it and
``tests/authz`` checks both, and runs every cell of every path listed in ``PATHS``.

Columns are namespace kinds seen from the caller: ``own`` = its ``agent/<id>``, ``others`` =
another agent's, ``user`` = ``user/<id>``, ``global``, ``task`` = ``task/<id>``. A graph node's
namespace is the event's, the scope of a scoped entity or session (``user/alice/kyoto``), the
user's, the agent's or the task's; an unscoped entity or session belongs to no namespace and may
be related by anyone.
"""

from __future__ import annotations

import enum
from typing import Protocol

from gateway.core.model.errors import PermissionDenied


class Namespace(Protocol):
    """``namespaces.Namespace`` (which imports this module): a kind and its owner id."""

    @property
    def kind(self) -> str: ...
    @property
    def owner(self) -> str: ...


class Outcome(enum.StrEnum):
    DIRECT = "DIRECT"
    PROPOSAL = "PROPOSAL"
    DENIED = "DENIED"


class Target(enum.StrEnum):
    #: a long-term memory (semantic, episodic, procedural; skills, results, imports)
    MEMORY = "memory"
    #: a working-memory turn as a user, assistant or tool, outside the instructions zone
    TURN = "turn"
    #: a turn that speaks as the system: role ``system`` or the ``instructions`` zone
    STEERING_TURN = "steering_turn"
    #: a session's state, compaction, scratch and end (cannot wait for an approval)
    SESSION = "session"
    #: an end of a graph relation (Relate, RecordEvent links; relations cannot be proposals)
    GRAPH = "graph"


COLUMNS = ("own", "others", "user", "global", "task")
CALLERS = ("master", "subagent")

# target, caller, then one outcome per column (own, others, user, global, task)
TABLE = """
memory         master    DIRECT  DIRECT  DIRECT    DIRECT    DIRECT
memory         subagent  DIRECT  DENIED  PROPOSAL  PROPOSAL  DIRECT
turn           master    DIRECT  DIRECT  DIRECT    DIRECT    DIRECT
turn           subagent  DIRECT  DENIED  PROPOSAL  PROPOSAL  DIRECT
steering_turn  master    DIRECT  DIRECT  DIRECT    DIRECT    DIRECT
steering_turn  subagent  DIRECT  DENIED  DENIED    DENIED    DENIED
session        master    DIRECT  DIRECT  DIRECT    DIRECT    DIRECT
session        subagent  DIRECT  DENIED  DENIED    DENIED    DIRECT
graph          master    DIRECT  DIRECT  DIRECT    DIRECT    DIRECT
graph          subagent  DIRECT  DENIED  DENIED    DENIED    DIRECT
"""


def _parse(table: str) -> dict[tuple[Target, str, str], Outcome]:
    out: dict[tuple[Target, str, str], Outcome] = {}
    for line in table.strip().splitlines():
        target, caller, *cells = line.split()
        assert len(cells) == len(COLUMNS), line
        for column, cell in zip(COLUMNS, cells, strict=True):
            out[(Target(target), caller, column)] = Outcome(cell)
    return out


POLICY = _parse(TABLE)

#: every RPC that can reach a layer, and the targets it can reach (the authorization test runs
#: each of them against every cell of its targets' rows; an RPC missing here and from
#: ``READ_OR_OPERATOR`` fails it)
PATHS: dict[str, tuple[Target, ...]] = {
    "Write": (Target.MEMORY, Target.TURN, Target.STEERING_TURN),
    "BatchWrite": (Target.MEMORY, Target.TURN, Target.STEERING_TURN),
    "SubmitResult": (Target.MEMORY, Target.TURN, Target.STEERING_TURN),
    "RecordEvent": (Target.MEMORY, Target.GRAPH),
    "RegisterSkill": (Target.MEMORY,),
    "AppendTurn": (Target.TURN, Target.STEERING_TURN),
    "AppendTurns": (Target.TURN, Target.STEERING_TURN),
    "UpdateSessionState": (Target.SESSION,),
    "CompactWindow": (Target.SESSION,),
    "ClearScratch": (Target.SESSION,),
    "EndSession": (Target.SESSION,),
    "Relate": (Target.GRAPH,),
    # master only (operator calls); their writes still pass ``require`` as the master
    "Import": (Target.MEMORY,),
}

#: paths that are operator calls: a sub-agent gets PERMISSION_DENIED whatever its row says
MASTER_ONLY = frozenset({"Import"})

#: RPCs that write no layer on a caller's behalf: reads, and operator or arbitration calls that
#: are master only (ProposeFact writes a pending row; its promotion is a memory write)
READ_OR_OPERATOR = frozenset(
    {
        "Recall",
        "Get",
        "History",
        "Forget",
        "GetWindow",
        "GetSessionState",
        "Timeline",
        "Neighbourhood",
        "ProposeFact",
        "ConfirmFact",
        "ListPendingFacts",
        "MatchSkill",
        "ListProposals",
        "ApproveProposal",
        "RejectProposal",
        "SetSharedWritePolicy",
        "StartTask",
        "UpdateStep",
        "GetTask",
        "Stats",
        "QueryAudit",
        "BreakerStates",
        "ListReview",
        "ListNamespaces",
        "Maintain",
        "Export",
        "ResolveReview",
        "ForgetNamespace",
        "ForgetSubject",
    }
)


def column(agent: str, ns: Namespace) -> str:
    if ns.kind == "agent":
        return "own" if ns.owner == agent else "others"
    return ns.kind


def decide(target: Target, agent: str, ns: Namespace, master: str) -> Outcome:
    caller = "master" if agent == master else "subagent"
    return POLICY[(target, caller, column(agent, ns))]


_WHY = {
    Target.MEMORY: "a sub-agent's writes there are proposals",
    Target.TURN: "a sub-agent's turns there are proposals",
    Target.STEERING_TURN: (
        "only the master sets the instructions of a shared session (a system turn or the "
        "instructions zone); send it as a user/assistant/tool turn"
    ),
    Target.SESSION: (
        "only the master changes the state or window of a shared session directly; propose "
        "turns with AppendTurn or facts with ProposeFact"
    ),
    Target.GRAPH: (
        "relations cannot be proposals: only the master relates nodes of shared namespaces "
        "(user/*, global), users and other agents"
    ),
}


def require(
    target: Target, agent: str, ns: Namespace, master: str, field: str = "namespace"
) -> Outcome:
    """``decide``, raising PERMISSION_DENIED (naming the field) for DENIED."""
    outcome = decide(target, agent, ns, master)
    if outcome is Outcome.DENIED:
        what = {
            Target.STEERING_TURN: "add a system or instructions turn to",
            Target.SESSION: "change the session state or window of",
            Target.GRAPH: "relate a node of",
        }.get(target, "write")
        if ns.kind == "agent":
            why = f"{ns} is private to agent {ns.owner!r}"
            if target is Target.GRAPH:
                why += ": only the master relates other agents' nodes"
        else:
            why = f"{ns} is shared: {_WHY[target]}"
        raise PermissionDenied(f"agent {agent!r} may not {what} {ns}: {why}", field=field)
    return outcome
