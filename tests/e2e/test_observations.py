"""Observations from plain talk through the client, both backends: a past conversation replayed
with its turn times forms episodic observations whose relative dates are resolved against those
times, a replay forms nothing twice, a turn time in the future is refused and changes nothing,
and recall answers with the observation once (not beside the fact formed from the same turn)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from gateway import client as gc
from gateway.core.formation.observations import TURN, WHEN
from tests.e2e.conftest import RunningGateway
from tests.tags import fresh_tag

MONDAY = datetime(2018, 11, 5, 18, 30, tzinfo=UTC)
CHAT = [
    ("user", "hey! how was your weekend?"),
    ("assistant", "pretty chill, you?"),
    ("user", "Yeah! I went to Boise yesterday for an Ultimate Frisbee tournament. We won 3 of 4"),
    ("assistant", "nice!! what else is new"),
    ("user", "My sister is moving to Denver next month and I'm taking an astronomy class"),
    ("assistant", "haha cool"),
    ("user", "thanks, nice talking to you! gotta go"),
]


def _replay(c, ns: str, session: str = "s1") -> list[str]:  # type: ignore[no-untyped-def]
    ids = []
    for n, (role, text) in enumerate(CHAT):
        r = c.append_turn(
            ns,
            session,
            role=role,
            content=text,
            at=MONDAY + timedelta(minutes=n),
            idempotency_key=f"{ns}:{session}:{n}",
            metadata={"speaker": "Sam" if role == "user" else "Alex"},
        )
        ids.append(r.id)
    return ids


def test_a_past_chat_forms_dated_observations(gw: RunningGateway) -> None:
    ns = f"user/sam{fresh_tag(6)}"
    with gw.client("master") as c:
        ids = _replay(c, ns)
        said_at = {t.id: t.at for t in c.window(ns, "s1", zones=["dialogue"])}
        assert said_at and all(
            said_at[i] == MONDAY + timedelta(minutes=ids.index(i)) for i in said_at
        )
        r = c.end_session(ns, "s1", wait=True)
        assert r.outcomes.get("observed") == 3, r
        events = c.timeline(ns, limit=50, types=["observation"])
        said = {e.summary: e for e in events}
        assert set(said) == {
            "Sam went to Boise on 2018-11-04 for an Ultimate Frisbee tournament.",
            "Sam's sister is moving to Denver in December 2018.",
            "Sam is taking an astronomy class.",
        }
        boise = c.get(
            said["Sam went to Boise on 2018-11-04 for an Ultimate Frisbee tournament."].id
        )
        assert boise.layer == "episodic" and boise.type == "observation"
        assert boise.event_time == datetime(2018, 11, 4, tzinfo=UTC)
        assert boise.metadata[WHEN] == "2018-11-04" and boise.metadata[TURN] == ids[2]
        assert (
            boise.evidence == ["I went to Boise yesterday for an Ultimate Frisbee tournament."]
            and "Boise" in boise.entities
        )
        # the graph knows them: the timeline answers a range by the resolved time
        early = c.timeline(
            ns, start=datetime(2018, 11, 4, tzinfo=UTC), end=MONDAY, types=["observation"]
        )
        assert [e.summary for e in early] == [boise.content]
        # recall finds what was said, once
        hits = c.recall("when did Sam go to Boise?", [ns], top_k=5)
        assert hits[0].id == boise.id
        assert len({h.content for h in hits}) == len(hits)
        # replayed (a retry of the import): nothing new, nothing twice
        _replay(c, ns)
        c.end_session(ns, "s1", wait=True)
        assert len(c.timeline(ns, limit=50, types=["observation"])) == 3


def test_a_turn_time_in_the_future_is_refused(gw: RunningGateway) -> None:
    ns = f"user/sam{fresh_tag(6)}"
    with gw.client("master") as c:
        with pytest.raises(gc.InvalidArgument, match="at .* is in the future"):
            c.append_turn(
                ns, "s1", role="user", content="hello", at=datetime.now(UTC) + timedelta(hours=1)
            )
        assert list(c.window(ns, "s1")) == []
        c.append_turn(
            ns, "s1", role="user", content="hello", at=datetime.now(UTC) + timedelta(seconds=30)
        )
        assert len(c.window(ns, "s1")) == 1  # within the clock skew allowed


def test_a_backfilled_answer_is_dated_by_its_own_time_and_its_question(gw: RunningGateway) -> None:
    """Turns of May 2018 imported in 2026: "next semester" and the weekend the question asked
    about resolve against the turns' times, not the clock."""
    ns = f"user/sam{fresh_tag(6)}"
    friday = datetime(2018, 5, 11, 20, 0, tzinfo=UTC)
    chat = [
        ("assistant", "Did you do anything fun over the weekend?"),
        ("user", "Yeah! I went to Boise for a tournament"),
        ("assistant", "nice"),
        ("user", "I'm taking physics next semester and I'm going to tennis practice right now"),
    ]
    with gw.client("master") as c:
        for n, (role, text) in enumerate(chat):
            c.append_turn(
                ns,
                "s1",
                role=role,
                content=text,
                at=friday + timedelta(minutes=n),
                metadata={"speaker": "Sam" if role == "user" else "Alex"},
            )
        c.end_session(ns, "s1", wait=True)
        got = {}
        for e in c.timeline(ns, limit=50, types=["observation"]):
            m = c.get(e.id)
            got[m.content] = (m.metadata[WHEN], m.event_time)
    assert got == {
        "Sam went to Boise for a tournament over the weekend of 2018-05-05.": (
            "2018-W18",
            datetime(2018, 4, 30, tzinfo=UTC),
        ),
        "Sam is taking physics in the semester starting September 2018.": (
            "2018",
            datetime(2018, 9, 1, tzinfo=UTC),
        ),
        "Sam is going to tennis practice right now, on 2018-05-11.": (
            "2018-05-11",
            datetime(2018, 5, 11, tzinfo=UTC),
        ),
    }, got
