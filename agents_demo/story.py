"""The cross-session story from the seeds (000 §1.1), acted out by a master and a sub-agent.

Session 1: the user says they do not eat cilantro (不吃香菜); the master remembers it. The chat
goes on until the dialogue window has rolled far past that turn. A sub-agent researches
restaurants for a batch task and hands back its findings.
Session 2 (a new window): the user asks for a takeout recommendation. The new window knows
nothing — but recall brings the preference back, and the recommendation avoids cilantro.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass

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


def run(target: str, say: Callable[[str], object] = print, user: str = USER) -> Outcome:
    master = MasterAgent(target, user_namespace=user)
    researcher = ResearchAgent(target, agent_id="researcher")
    try:
        say("== session 1 ==")
        master.user_says("s1", "记住：我不吃香菜。Remember: I don't eat cilantro.")
        for line in SMALL_TALK * 2:
            master.user_says("s1", line)
        window = master.window("s1")
        still_there = any("香菜" in t.content for t in window if t.zone == "dialogue")
        say(
            f"  dialogue window now holds {sum(t.zone == 'dialogue' for t in window)} turns; "
            f"the cilantro turn is {'still' if still_there else 'no longer'} in it"
        )

        say("== sub-agent: batch task 'find-dinner-spots' ==")
        report = researcher.research("find-dinner-spots", user)
        say(f"  {report}")

        say("== session 2 (new window) ==")
        fresh = master.window("s2")
        say(f"  new window holds {len(fresh)} turns")
        recommendation, hits = master.recommend_takeout("s2")
        for h in hits[:3]:
            say(f"  recalled [{h.layer} {h.score:.2f}] {h.content}")
        say(f"  master: {recommendation}")
        recalled = any("香菜" in h.content or "cilantro" in h.content.lower() for h in hits)
        return Outcome(recalled, not still_there, recommendation)
    finally:
        master.close()
        researcher.close()


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m agents_demo", description=__doc__)
    parser.add_argument("--target", help="a running gateway (default: start an embedded one)")
    parser.add_argument("--embedder", default="minilm", choices=list(EMBEDDER_KINDS))
    args = parser.parse_args(argv)
    if args.target:
        outcome = run(args.target)
    else:
        from agents_demo.embedded import embedded_gateway

        with embedded_gateway(args.embedder) as target:
            outcome = run(target)
    ok = outcome.preference_recalled and outcome.rolled_out_of_window
    print("demo:", "OK — the preference survived the window and the session" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
