"""The multi-agent act of the demo: a master and two sub-agents on one task.

* The researcher keeps private notes, records what it did in the task's namespace and hands its
  result back with ``submit_result`` — its finding about the user becomes a proposal.
* The planner proposes to ``global`` (a team rule), and to the user's namespace a fact that
  contradicts what is stored.
* What each agent may and may not read is printed as it happens (a sub-agent's private namespace
  is its own; a shared write from a sub-agent is a proposal).
* The master decides every proposal of the run: one approved, one rejected with a reason, and
  the contradicting one approved — which supersedes the stored fact (its history keeps both).
* A Chinese turn in the conversation is recalled by a Chinese question in a later session.
* Cleanup: everything the run wrote is erased (``keep=True`` leaves it, for the console).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from agents_demo.access import Access
from agents_demo.master import MasterAgent
from gateway.client import GatewayError, PermissionDenied

RESEARCHER, PLANNER = "researcher", "planner"


@dataclass
class TeamOutcome:
    approved: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)  # stored facts an approval replaced
    pending_left: int = 0  # this run's proposals nobody decided
    refused_reads: list[str] = field(default_factory=list)
    chinese_recalled: bool = False
    current_city: str = ""
    erased: list[str] = field(default_factory=list)


def act(
    access: Access,
    master: MasterAgent,
    user: str,
    run_id: str,
    say: Callable[[str], object],
    keep: bool = False,
) -> TeamOutcome:
    out = TeamOutcome()
    task = f"dinner-plan-{run_id}"
    researcher, planner = access.client(RESEARCHER), access.client(PLANNER)
    m = master.client
    written_global: list[str] = []
    private: list[tuple[object, str]] = []
    try:
        say(f"== a team on one task: master, {RESEARCHER}, {PLANNER} (task/{task}) ==")
        m.write(user, "semantic", "Alice lives in Berlin", wait=True)
        say("  master: stored 'Alice lives in Berlin'")

        note = researcher.write(
            f"agent/{RESEARCHER}", "semantic", "Restaurant APIs rate-limit at 10 requests/s",
            task_id=task, wait=True,
        )  # fmt: skip
        private.append((researcher, note))
        say(f"  {RESEARCHER}: private note in agent/{RESEARCHER} (only it and the master read it)")
        try:
            planner.recall("rate limits", [f"agent/{RESEARCHER}"])
        except PermissionDenied as exc:
            out.refused_reads.append(f"agent/{RESEARCHER}")
            say(f"  {PLANNER} reads agent/{RESEARCHER}: refused ({exc.message})")
        seen = researcher.recall("where does Alice live?", [user], top_k=1, layers=["semantic"])
        say(f"  {RESEARCHER} reads {user} (shared): '{seen[0].content if seen else '-'}'")

        researcher.record_event(
            f"task/{task}", "Compared 3 dinner places near the office", task_id=task,
            entities=["dinner"], wait=True,
        )  # fmt: skip
        result = researcher.submit_result(
            task,
            status="done",
            summary="Compared 3 dinner places; the Sichuan noodle bar fits best",
            decisions=["book the Sichuan noodle bar, no cilantro"],
            memory_updates=[
                dict(
                    namespace=user,
                    layer="semantic",
                    confidence=0.6,
                    content="Alice orders dinner around 19:00",
                )  # fmt: skip
            ],
        )
        say(
            f"  {RESEARCHER}: submit_result → event {result.event_id[:8]}… in task/{task}, "
            f"{len(result.proposals)} finding(s) about the user proposed to the master"
        )
        rule = planner.write_result(
            "global", "semantic", "The team's dinner budget is 30 euros per person", task_id=task
        )
        wrong = planner.write_result(
            "global", "semantic", "The office is closed on Fridays", task_id=task
        )
        moved = planner.write_result(
            user, "semantic", "Alice lives in Munich", task_id=task, confidence=0.9
        )
        say(
            f"  {PLANNER}: its writes to global and {user} came back as proposals "
            f"({', '.join(p.proposal_id[:8] + '…' for p in (rule, wrong, moved))})"
        )
        mine = {p.id for p in result.proposals} | {
            r.proposal_id for r in (rule, wrong, moved) if r.proposal_id
        }

        say("== the master decides ==")
        for p in m.proposals("pending", 500):
            if p.id not in mine:
                continue
            what = f"{p.proposer}'s '{p.item.content}' for {p.item.namespace}"
            if p.conflicts_with is not None:
                say(f"  competes with the stored '{p.conflicts_with.content}'")
            if p.item.content == "The office is closed on Fridays":
                m.reject(p.id, reason="not true: only the canteen closes on Fridays")
                out.rejected.append(p.item.content)
                say(f"  rejected {what}: not true, only the canteen closes")
                continue
            decided = m.approve(p.id, reason="checked with the user")
            out.approved.append(p.item.content)
            if p.conflicts_with is not None:
                out.superseded.append(p.conflicts_with.content)
                say(f"  approved {what}: it supersedes '{p.conflicts_with.content}'")
            else:
                say(f"  approved {what}")
            if p.item.namespace == "global" and decided.memory_id:
                written_global.append(decided.memory_id)
        out.pending_left = sum(1 for p in m.proposals("pending", 500) if p.id in mine)
        now = m.recall("where does Alice live?", [user], top_k=1, layers=["semantic"])
        out.current_city = now[0].content if now else ""
        say(f"  now: '{out.current_city}' (the earlier city stays in its history)")

        say("== a Chinese turn, recalled in a later session ==")
        s4, s5 = f"demo-{run_id}-s4", f"demo-{run_id}-s5"
        m.append_turn(user, s4, role="user", content="我周五晚上想和同事去吃火锅，别太辣。")
        m.append_turn(user, s4, role="assistant", content="好的，我帮你找一家微辣的火锅店。")
        m.end_session(user, s4, wait=True)
        hits = m.recall("周五晚上想吃什么？", [user], top_k=3, session_id=s5)
        out.chinese_recalled = any("火锅" in h.content for h in hits)
        for h in hits[:2]:
            say(f"  recalled [{h.layer}] {h.content}")
    finally:
        if not keep:
            out.erased = _clean_up(m, user, task, written_global, private, say)
        researcher.close()
        planner.close()
    return out


def _clean_up(
    m: object,
    user: str,
    task: str,
    written_global: list[str],
    private: list[tuple[object, str]],
    say: Callable[[str], object],
) -> list[str]:
    """Erase what the run wrote: the user's and the task's namespaces, the approved global
    fact, the sub-agents' private notes."""
    erased = []
    try:
        for ns in (user, f"task/{task}"):
            m.forget_namespace(ns, reason="demo clean-up")  # type: ignore[attr-defined]
            erased.append(ns)
        for mid in written_global:
            m.forget(mid, reason="demo clean-up")  # type: ignore[attr-defined]
            erased.append(f"global:{mid[:8]}")
        for client, mid in private:
            client.forget(mid, reason="demo clean-up")  # type: ignore[attr-defined]
            erased.append(f"private:{mid[:8]}")
    except GatewayError as exc:
        say(f"  clean-up stopped: {exc.message}")
    say(f"== clean-up: erased {', '.join(erased)} (--keep leaves them for the console) ==")
    return erased
