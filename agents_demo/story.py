"""The cross-session story from the seeds (000 §1.1), acted out by a master and a sub-agent.

Session 1: the user says they do not eat cilantro (不吃香菜); the master remembers it. The chat
goes on until the dialogue window has rolled far past that turn. A sub-agent researches
restaurants for a batch task and hands back its findings.
Session 2 (a new window): the user asks for a takeout recommendation. The new window knows
nothing — but recall brings the preference back, and the recommendation avoids cilantro.

Memory formation (seed 000 §3.4, §5.1): in session 1 the user also mentions a peanut allergy and,
chatting, that they are learning French; in session 2 the allergy comes up again. No agent calls
propose_fact: ending each session lets the gateway mine it. After session 2 the allergy is a
semantic fact with the user's words as evidence and a third session recalls it; French, said
once in small talk, is not promoted.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from agents_demo.master import MasterAgent
from agents_demo.subagent import ResearchAgent
from gateway.embedding.factory import EMBEDDER_KINDS

USER = "user/alice"

SMALL_TALK = [
    "How was your weekend?",
    "Any plans for the holidays?",
    "What's a good book to read?",
    "Tell me a fun fact about octopuses.",
    "Is it going to rain tomorrow?",
    "What's the capital of Australia?",
    "Give me a synonym for 'happy'.",
    "How many minutes in a day?",
    "Recommend a podcast about history.",
    "What's 17 times 23?",
    "Who painted the Mona Lisa?",
    "Suggest a name for a cat.",
]


@dataclass
class Outcome:
    preference_recalled: bool
    rolled_out_of_window: bool
    recommendation: str
    formed: list[str] = field(default_factory=list)  # facts the gateway formed by itself
    formed_evidence: list[str] = field(default_factory=list)
    allergy_recalled: bool = False
    small_talk_promoted: bool = False
    observed: list[str] = field(default_factory=list)  # observations formed from plain talk


def run(
    target: str, say: Callable[[str], object] = print, user: str = USER, run_id: str = ""
) -> Outcome:
    """One telling of the story into ``user``. Sessions and the task are named after ``run_id``
    (default: a fresh one), so a second run against the same gateway tells the same story."""
    run_id = run_id or uuid.uuid4().hex[:8]
    s1, s2 = f"demo-{run_id}-s1", f"demo-{run_id}-s2"
    master = MasterAgent(target, user_namespace=user)
    researcher = ResearchAgent(target, agent_id="researcher")
    try:
        say("== session 1 ==")
        master.user_says(s1, "记住：我不吃香菜。Remember: I don't eat cilantro.")
        master.user_says(s1, "Also, I'm allergic to peanuts.")
        master.user_says(s1, "Ha, I'm learning French lately, just for fun.")
        for line in SMALL_TALK * 2:
            master.user_says(s1, line)
        window = master.window(s1)
        still_there = any("香菜" in t.content for t in window if t.zone == "dialogue")
        say(
            f"  dialogue window now holds {sum(t.zone == 'dialogue' for t in window)} turns; "
            f"the cilantro turn is {'still' if still_there else 'no longer'} in it"
        )

        say(f"== sub-agent: batch task find-dinner-spots-{run_id} ==")
        report = researcher.research(f"find-dinner-spots-{run_id}", user)
        say(f"  {report}")

        say("== session 2 (new window) ==")
        fresh = master.window(s2)
        say(f"  new window holds {len(fresh)} turns")
        recommendation, hits = master.recommend_takeout(s2)
        for h in hits[:3]:
            say(f"  recalled [{h.layer} {h.score:.2f}] {h.content}")
        say(f"  master: {recommendation}")
        recalled = any("香菜" in h.content or "cilantro" in h.content.lower() for h in hits)

        say("== memory formation: sessions end, the gateway mines them ==")
        r1 = master.end_session(s1)
        say(f"  after s1: {r1.outcomes} ({r1.extractor}, {r1.turns} turns)")
        master.user_says(s2, "Anything without peanuts is fine, I'm allergic to peanuts.")
        master.user_says(s2, "Oh, I went to the farmers market yesterday and bought peaches.")
        r2 = master.end_session(s2)
        say(f"  after s2: {r2.outcomes}")
        # plain talk, no "remember": observations, dated against the turn's time
        observed = master.client.timeline(user, limit=50, types=["observation"])
        for e in observed:
            say(f"  observed [{e.at:%Y-%m-%d}] {e.summary}")
        formed = [
            m
            for m in master.formed_facts()
            if m.metadata.get("memgate.formed.reason") == "two-sessions"
        ]
        for m in formed:
            say(
                f"  formed [{m.type}] {m.content} — evidence {m.evidence} sessions {m.metadata['memgate.formed.sessions']}"
            )
        say("== session 3 (new window) ==")
        allergy = master.client.recall(
            "does the user have any food allergies?",
            namespaces=[user],
            layers=["semantic"],
            top_k=3,
        )
        for h in allergy:
            say(f"  recalled [{h.layer} {h.score:.2f}] {h.content}")
        everything = master.client.recall(
            "what language is the user learning? French", namespaces=[user], layers=["semantic"]
        )
        return Outcome(
            recalled,
            not still_there,
            recommendation,
            formed=[m.content for m in formed],
            formed_evidence=[e for m in formed for e in m.evidence],
            allergy_recalled=any("peanut" in h.content for h in allergy),
            observed=[e.summary for e in observed],
            small_talk_promoted=any("French" in h.content for h in everything),
        )
    finally:
        master.close()
        researcher.close()


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m agents_demo", description=__doc__)
    parser.add_argument("--target", help="a running gateway (default: start an embedded one)")
    parser.add_argument("--embedder", default="minilm", choices=list(EMBEDDER_KINDS))
    parser.add_argument(
        "--namespace",
        help="the user namespace the story is told in (default: a fresh user/demo-<id> each run, "
        "never the README tour's user/alice)",
    )
    args = parser.parse_args(argv)
    run_id = uuid.uuid4().hex[:8]
    user = args.namespace or f"user/demo-{run_id}"
    print(f"demo: namespace {user}, sessions demo-{run_id}-s1/-s2")
    if args.target:
        outcome = run(args.target, user=user, run_id=run_id)
    else:
        from agents_demo.embedded import embedded_gateway

        with embedded_gateway(args.embedder) as target:
            outcome = run(target, user=user, run_id=run_id)
    ok = (
        outcome.preference_recalled
        and outcome.rolled_out_of_window
        and outcome.allergy_recalled
        and not outcome.small_talk_promoted
    )
    print("demo:", "OK — the preference survived the window and the session" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
