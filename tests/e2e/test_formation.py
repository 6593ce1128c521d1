"""Memory formation over gRPC (seed 000 §3.4, §5.1–5.2): facts said in two sessions become
semantic memories with their evidence and provenance, nobody calling propose_fact; a one-off
small-talk mention does not; "remember" promotes at once; a contradiction supersedes only when
it is at least as strong, else it goes to review; EndSession's rules; the idle and every-N
triggers; a journaled job survives a restart; a turn replayed after it was mined forms nothing."""

from __future__ import annotations

import asyncio
import sqlite3
import time
import uuid
from pathlib import Path

import pytest

from gateway import client as gc
from gateway.core.model import commands
from gateway.core.model.candidates import EXTRACTOR, SESSION, SESSIONS, TURNS
from gateway.core.model.commands import FormSession, TurnAppend
from gateway.core.model.control import NewEntry
from stores.sqlite_journal import SqliteJournal
from tests.e2e.conftest import RunningGateway, gateway_settings, running_gateway
from tests.tags import fresh_tag


def _formed(c: gc.GatewayClient, ns: str) -> list[gc.Memory]:
    """The memories formation wrote in ``ns``, newest version of each, via the audit log."""
    ids = {
        e.target for e in c.audit(agent_id="memgate.formation", namespace=ns) if e.action == "form"
    }
    return [c.get(i) for i in sorted(ids)]


def _say(c: gc.GatewayClient, ns: str, session: str, *lines: str) -> list[str]:
    ids = []
    for line in lines:
        ids.append(c.append_turn(ns, session, role="user", content=line).id)
        c.append_turn(ns, session, role="assistant", content="(answer)")
    return ids


def test_two_sessions_promote_with_provenance(gw: RunningGateway, ns: str) -> None:
    with gw.client("master") as c:
        first = _say(c, ns, "s1", "By the way, I'm vegetarian.", "How was your weekend?")
        r1 = c.end_session(ns, "s1", wait=True)
        assert r1.applied and r1.turns == 4 and r1.extractor == "rules/1"
        assert r1.outcomes.get("pending") == 1 and not r1.outcomes.get("promoted")
        assert _formed(c, ns) == []  # one session is not enough
        second = _say(c, ns, "s2", "Any vegetarian place is fine, I'm vegetarian after all.")
        r2 = c.end_session(ns, "s2", wait=True)
        assert r2.outcomes.get("promoted") == 1
        [mem] = _formed(c, ns)
        assert mem.layer == "semantic" and mem.type == "constraint"
        assert mem.content == "The user's diet: vegetarian"
        assert mem.evidence == [
            "By the way, I'm vegetarian.",
            "Any vegetarian place is fine, I'm vegetarian after all.",
        ]
        assert mem.source_agent == "memgate.formation" and mem.source_session == "s2"
        md = mem.metadata
        assert md[SESSION] == "s2" and md[SESSIONS] == "s1,s2" and md[EXTRACTOR] == "rules/1"
        assert md[TURNS].split(",") == [first[0], second[0]]
        assert md["fact_key"] == "user.diet" and float(md["memgate.formed.confidence"]) >= 0.7
        assert [v.metadata[EXTRACTOR] for v in c.history(mem.id)] == ["rules/1"]
        # a new session recalls it; the audit log says what formed it and from which turns
        hits = c.recall("is the user vegetarian?", namespaces=[ns], top_k=3)
        assert hits and hits[0].id == mem.id
        [entry] = [
            e for e in c.audit(agent_id="memgate.formation", namespace=ns) if e.target == mem.id
        ]
        assert "rules/1 two-sessions user.diet session=s2" in entry.detail


def test_one_off_small_talk_is_not_promoted(gw: RunningGateway, ns: str) -> None:
    """Seed 000 §5.1: "I'm learning French lately", said once while chatting, stays pending."""
    with gw.client("master") as c:
        _say(c, ns, "s1", "Ha, I'm learning French lately, for fun.", "我最近在学法语。")
        assert c.end_session(ns, "s1", wait=True).outcomes.get("pending") == 2
        for s in ("s2", "s3"):
            _say(c, ns, s, "Can you suggest a dinner recipe?", "Thanks, that's all.")
            c.end_session(ns, s, wait=True)
        assert _formed(c, ns) == []
        hits = c.recall("what language is the user learning", namespaces=[ns], layers=["semantic"])
        assert not [h for h in hits if "French" in h.content or "法语" in h.content]


def test_explicit_remember_promotes_at_once(gw: RunningGateway, ns: str) -> None:
    with gw.client("master") as c:
        _say(c, ns, "s1", "记住：我不吃香菜。", "以后都用中文回复我")
        r = c.end_session(ns, "s1", wait=True)
        assert r.outcomes.get("promoted") == 2
        # the extractor's key is in the provenance; the fact key is the slot where it has one
        by_key = {m.metadata["memgate.formed.key"]: m for m in _formed(c, ns)}
        assert by_key["user.avoids.香菜"].metadata["fact_key"] == "slot:user:eats:cilantro"
        assert by_key["user.avoids.香菜"].content == "用户不吃香菜"
        assert by_key["user.avoids.香菜"].importance == pytest.approx(0.9)
        assert by_key["user.reply_language"].metadata["memgate.formed.reason"] == "explicit"


def test_contradiction_supersedes_when_stronger_else_review(gw: RunningGateway, ns: str) -> None:
    with gw.client("master") as c:
        for s in ("s1", "s2"):
            _say(c, ns, s, "I live in Seattle.")
            c.end_session(ns, s, wait=True)
        [seattle] = _formed(c, ns)
        assert seattle.content == "The user lives in Seattle"
        # a correction is as strong as what is stored: it replaces it, the old one is history
        _say(c, ns, "s3", "Actually, I live in Denver now.")
        assert c.end_session(ns, "s3", wait=True).outcomes.get("promoted") == 1
        now = c.get(seattle.id)
        assert now.content == "The user lives in Denver" and now.version == 2
        assert [v.content for v in c.history(seattle.id)] == [
            "The user lives in Seattle",
            "The user lives in Denver",
        ]
        # a weaker claim (one plain mention each in two sessions, less evidence) goes to review
        for s in ("s4", "s5"):
            _say(c, ns, s, "I'm based in Boston.")
            r = c.end_session(ns, s, wait=True)
        assert r.outcomes.get("review") == 1
        assert c.get(seattle.id).content == "The user lives in Denver"
        assert seattle.id in [m.id for m in c.review_queue()]


def test_a_later_session_adds_its_evidence_to_the_formed_fact(gw: RunningGateway, ns: str) -> None:
    with gw.client("master") as c:
        turns = []
        for s in ("s1", "s2"):
            turns += _say(c, ns, s, "I'm allergic to peanuts.")
            c.end_session(ns, s, wait=True)
        [mem] = _formed(c, ns)
        assert mem.version == 1 and mem.metadata[SESSIONS] == "s1,s2"
        turns += _say(c, ns, "s3", "Careful with the satay, I'm allergic to peanuts!")
        r = c.end_session(ns, "s3", wait=True)
        assert r.outcomes.get("confirmed") == 1 and not r.outcomes.get("promoted")
        now = c.get(mem.id)
        assert now.version == 2 and now.content == mem.content
        assert now.metadata[SESSIONS] == "s1,s2,s3" and now.metadata[SESSION] == "s3"
        assert now.metadata[TURNS].split(",") == turns
        assert now.evidence[-1] == "Careful with the satay, I'm allergic to peanuts!"
        assert len(now.evidence) == 3
        assert [v.metadata[SESSIONS] for v in c.history(mem.id)] == ["s1,s2", "s1,s2,s3"]
        entries = [e for e in c.audit(agent_id="memgate.formation", namespace=ns)]
        assert any(e.action == "confirm" and "session=s3" in e.detail for e in entries)
        # the same session mined again (nothing new) adds nothing
        c.end_session(ns, "s3", wait=True)
        assert c.get(mem.id).version == 2


@pytest.mark.parametrize(
    ("likes", "dislikes"),
    [("I love sushi.", "I really hate sushi."), ("我喜欢香菜。", "我不喜欢香菜。")],
)
def test_liking_and_disliking_a_thing_contradict(
    gw: RunningGateway, ns: str, likes: str, dislikes: str
) -> None:
    """ "likes X" then "dislikes X" (0.7 >= 0.65): superseded, the old one kept as history; then
    "likes X" again, less sure than the stored dislike: review."""
    with gw.client("master") as c:
        for s in ("s1", "s2"):
            _say(c, ns, s, likes)
            c.end_session(ns, s, wait=True)
        [liked] = _formed(c, ns)
        key = liked.metadata["fact_key"]
        assert ".taste." in liked.metadata["memgate.formed.key"]
        for s in ("s3", "s4"):
            _say(c, ns, s, dislikes)
            r = c.end_session(ns, s, wait=True)
        assert r.outcomes.get("promoted") == 1
        now = c.get(liked.id)
        assert now.version == 2 and now.metadata["fact_key"] == key
        assert [v.content for v in c.history(liked.id)] == [liked.content, now.content]
        assert now.content != liked.content
        _say(c, ns, "s5", likes)
        assert c.end_session(ns, "s5", wait=True).outcomes.get("review") == 1
        assert c.get(liked.id).content == now.content
        assert liked.id in [m.id for m in c.review_queue()]


def test_end_session_rules(gw: RunningGateway, ns: str) -> None:
    sub = f"sub-{fresh_tag(6)}"
    private = f"agent/{sub}"
    with gw.client(sub) as cs, gw.client(f"other-{fresh_tag(6)}") as co:
        cs.append_turn(private, "s1", role="user", content="I'm vegan.")
        # same rule as AppendTurn: another agent may not touch a private session
        with pytest.raises(gc.PermissionDenied):
            co.end_session(private, "s1")
        with pytest.raises(gc.InvalidArgument, match="session_id"):
            cs.end_session(private, "")
        with pytest.raises(gc.InvalidArgument, match="session_id"):
            cs.end_session(private, "x" * 129)
        with pytest.raises(gc.InvalidArgument, match="namespace"):
            cs.end_session("nope", "s1")
        first = cs.end_session(private, "s1", wait=True)
        assert (
            first.job_id
            and first.turns == 1
            and first.outcomes
            == {
                "pending": 1,
                "observed": 1,
                "kept": 1,
            }
        )
        # nothing new: no job; the same range asked again is the same job
        assert cs.end_session(private, "s1").job_id == ""
        # a shared session is the master's to close: a sub-agent's turns there are proposals
        with pytest.raises(gc.PermissionDenied):
            cs.end_session(ns, "s9")
        with gw.client("master") as cm:
            cm.append_turn(ns, "s9", role="user", content="I'm vegan.")
            assert cm.end_session(ns, "s9", wait=True).turns == 1


def test_idle_and_every_n_triggers(tmp_path: Path, backend: dict[str, str], ns: str) -> None:
    settings = gateway_settings(
        tmp_path, formation_idle_s=1.0, formation_every_turns=4, formation_scan_s=0.2, **backend
    )
    with running_gateway(settings) as gw, gw.client("master") as c:
        _say(c, ns, "busy", "I'm allergic to peanuts.", "Tell me a joke.")  # 4 turns
        _say(c, ns, "quiet", "I'm allergic to peanuts.")  # 2 turns, then idle
        deadline = time.monotonic() + 20
        triggers: set[str] = set()
        while time.monotonic() < deadline and len(triggers) < 2:
            formed = [
                e
                for e in c.audit(agent_id="memgate.formation", namespace=ns)
                if e.action == "formed"
            ]
            triggers = {e.detail.rsplit("trigger=", 1)[1] for e in formed}
            time.sleep(0.2)
        assert triggers == {"every-n", "idle"}
        # the two sessions confirmed each other: nobody called EndSession
        [mem] = _formed(c, ns)
        assert mem.content == "The user is allergic to peanuts"
        assert set(mem.metadata[SESSIONS].split(",")) == {"busy", "quiet"}


def test_a_journaled_job_runs_after_a_restart(tmp_path: Path, ns: str) -> None:
    """A job acknowledged but not run before the gateway stopped runs at the next start."""
    settings = gateway_settings(tmp_path, formation_idle_s=0, formation_every_turns=0)
    with running_gateway(settings) as gw, gw.client("master") as c:
        _say(c, ns, "s1", "Remember: I'm allergic to shellfish.")
    journal = SqliteJournal(settings.data_dir / "journal.db")

    async def journal_a_job() -> None:
        await journal.start()
        cmd = FormSession(ns, "s1", upto=10**9, requested_by="master")
        await journal.append([NewEntry(uuid.uuid4().hex, "master", "form-after-crash", cmd)])
        await journal.close()

    asyncio.run(journal_a_job())
    with running_gateway(settings) as gw, gw.client("master") as c:
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and not _formed(c, ns):
            time.sleep(0.1)
        [mem] = _formed(c, ns)
        assert mem.content == "The user is allergic to shellfish"
        # the range is mined: ending the session now finds nothing new
        assert c.end_session(ns, "s1").job_id == ""


ALLERGY = "Remember: I'm allergic to shellfish."


def _form_runs(c: gc.GatewayClient, ns: str) -> int:
    return sum(e.action == "formed" for e in c.audit(agent_id="memgate.formation", namespace=ns))


def test_a_turn_replayed_after_its_session_was_mined_forms_nothing(
    gw: RunningGateway, ns: str
) -> None:
    """A client retrying (or re-importing) turns of a session already mined, with their keys:
    each is the same turn, acknowledged as a duplicate, and mined no second time."""
    said = [("user", ALLERGY), ("assistant", "Noted.")]
    with gw.client("master") as c:
        first = [
            c.append_turn(ns, "s1", role=role, content=text, idempotency_key=f"turn-{i}")
            for i, (role, text) in enumerate(said)
        ]
        mined = c.end_session(ns, "s1", wait=True)
        assert mined.turns == 2 and mined.outcomes.get("promoted") == 1
        [mem] = _formed(c, ns)
        again = [
            c.append_turn(ns, "s1", role=role, content=text, idempotency_key=f"turn-{i}")
            for i, (role, text) in enumerate(said)
        ]
        assert [(a.id, a.duplicate) for a in again] == [(f.id, True) for f in first]
        ended = c.end_session(ns, "s1", wait=True)
        assert (ended.job_id, ended.turns) == ("", 0)
        assert [m.id for m in _formed(c, ns)] == [mem.id] and len(c.history(mem.id)) == 1
        assert _form_runs(c, ns) == 1


def test_a_turn_applied_again_after_a_crash_is_not_mined_again(tmp_path: Path, ns: str) -> None:
    """The gateway stopped after formation mined a turn but before the turn's own lane marked it
    applied: the next start applies the turn again, and formation knows it is mined."""
    settings = gateway_settings(tmp_path, formation_idle_s=0, formation_every_turns=0)
    with running_gateway(settings) as gw, gw.client("master") as c:
        turn = c.append_turn(ns, "s1", role="user", content=ALLERGY).id
        assert c.end_session(ns, "s1", wait=True).outcomes.get("promoted") == 1
        [mem] = _formed(c, ns)
    journal = sqlite3.connect(settings.data_dir / "journal.db")
    with journal:  # the turn as the journal held it before its lane marked it applied
        payload = commands.dumps(TurnAppend(ns, "s1", ALLERGY))
        journal.execute("UPDATE journal SET applied=0, payload=? WHERE write_id=?", (payload, turn))
    journal.close()
    with running_gateway(settings) as gw, gw.client("master") as c:
        deadline = time.monotonic() + 15
        while c.stats().journal_pending and time.monotonic() < deadline:
            time.sleep(0.1)
        assert c.stats().journal_pending == 0
        assert [t.id for t in c.window(ns, "s1")] == [turn]
        ended = c.end_session(ns, "s1", wait=True)
        assert (ended.job_id, ended.turns) == ("", 0)
        assert [m.id for m in _formed(c, ns)] == [mem.id] and len(c.history(mem.id)) == 1
        assert _form_runs(c, ns) == 1
