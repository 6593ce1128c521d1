"""The cross-session story from the seeds (000 §1.1), acted out by a master and a sub-agent.

Session 1: the user says they do not eat cilantro (不吃香菜); the master remembers it. The chat
goes on until the dialogue window has rolled far past that turn.
Session 2 (a new window): the user asks for a takeout recommendation. The new window knows
nothing — but recall brings the preference back, and the recommendation avoids cilantro.

Memory formation (seed 000 §3.4, §5.1): in session 1 the user also mentions a peanut allergy and,
chatting, that they are learning French; in session 2 the allergy comes up again. No agent calls
propose_fact: ending each session lets the gateway mine it. After session 2 the allergy is a
semantic fact with the user's words as evidence and a third session recalls it; French, said
once in small talk, is not promoted.

Then the team (``agents_demo/team.py``): private notes, ``submit_result``, proposals to the user's
namespace and to ``global`` decided by the master (approved, rejected with a reason, approved
over a contradicting fact), what each agent may read, a Chinese turn recalled later, clean-up.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from agents_demo import team
from agents_demo.access import Access
from agents_demo.master import MasterAgent
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
    team: team.TeamOutcome | None = None


def run(
    target: str | Access,
    say: Callable[[str], object] = print,
    user: str = USER,
    run_id: str = "",
    keep: bool = False,
) -> Outcome:
    """One telling of the story into ``user``. Sessions and the task are named after ``run_id``
    (default: a fresh one), so a second run against the same gateway tells the same story;
    what it wrote is erased at the end unless ``keep``."""
    access = target if isinstance(target, Access) else Access(target)
    run_id = run_id or uuid.uuid4().hex[:8]
    s1, s2 = f"demo-{run_id}-s1", f"demo-{run_id}-s2"
    master = MasterAgent(access, user_namespace=user)
    try:
        say("== session 1 ==")
        master.user_says(
            s1,
            "记住：我不吃香菜。Remember: I don't eat cilantro.",
            note="The user does not eat cilantro (不吃香菜)",
        )
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
        said_on: dict[str, list[str]] = {}  # said in both sessions: one line, both dates
        for e in observed:
            said_on.setdefault(e.summary, []).append(f"{e.at:%Y-%m-%d}")
        for summary, dates in said_on.items():
            say(f"  observed [{', '.join(dates)}] {summary}")
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
        acted = team.act(access, master, user, run_id, say, keep=keep)
        return Outcome(
            recalled,
            not still_there,
            recommendation,
            formed=[m.content for m in formed],
            formed_evidence=[e for m in formed for e in m.evidence],
            allergy_recalled=any("peanut" in h.content for h in allergy),
            observed=[e.summary for e in observed],
            small_talk_promoted=any("French" in h.content for h in everything),
            team=acted,
        )
    finally:
        master.close()


def main(argv: list[str] | None = None) -> int:
    import argparse

    from gateway.client import GatewayError
    from gateway.client_options import add_tls_options, tls_of

    parser = argparse.ArgumentParser(prog="python -m agents_demo", description=__doc__)
    parser.add_argument("--target", help="a running gateway (default: start an embedded one)")
    parser.add_argument(
        "--embedder", default="", choices=["", *EMBEDDER_KINDS], help="default: the gateway's"
    )
    parser.add_argument(
        "--namespace",
        help="the user namespace the story is told in (default: a fresh user/demo-<id> each run, "
        "never the README tour's user/alice)",
    )
    parser.add_argument(
        "--api-keys",
        metavar="FILE",
        help="the agents' keys for a gateway that checks them: master, researcher and planner as "
        "agent=key pairs (one a line, or comma-separated; default: $MEMGATE_API_KEYS)",
    )
    parser.add_argument(
        "--keep", action="store_true", help="leave what the run wrote (to look at in the console)"
    )
    add_tls_options(parser)
    args = parser.parse_args(argv)
    run_id = uuid.uuid4().hex[:8]
    user = args.namespace or f"user/demo-{run_id}"
    print(f"demo: namespace {user}, sessions demo-{run_id}-s1…s5, task dinner-plan-{run_id}")
    if args.target:
        try:
            access = Access.of(args.target, args.api_keys, tls_of(args))
        except OSError as exc:
            print(f"demo: {exc}", file=sys.stderr)
            return 2
        try:
            outcome = run(access, user=user, run_id=run_id, keep=args.keep)
        except GatewayError as exc:
            print(
                f"demo: the gateway refused: {exc.message} (a keyed gateway needs --api-keys "
                "with keys for master, researcher and planner; TLS needs --tls-ca)",
                file=sys.stderr,
            )
            return 2
    else:
        from agents_demo.embedded import embedded_gateway

        with embedded_gateway(args.embedder) as target:
            outcome = run(target, user=user, run_id=run_id, keep=args.keep)
    acted = outcome.team
    ok = (
        outcome.preference_recalled
        and outcome.rolled_out_of_window
        and outcome.allergy_recalled
        and not outcome.small_talk_promoted
        and acted is not None
        and acted.pending_left == 0
        and bool(acted.rejected and acted.superseded)
        and acted.chinese_recalled
    )
    print(
        "demo:",
        "OK — the preference survived the window and the session; the team's proposals were decided"
        if ok
        else "FAILED",
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
