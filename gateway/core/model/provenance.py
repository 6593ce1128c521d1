"""Where a memory formed from conversation came from: the reserved metadata keys that tie a kept
turn, an observation and a formed fact to the turn that said it (callers cannot write them; the
transport shows them). Recall folds what points at the same turn into one answer."""

from __future__ import annotations

from gateway.core.model.candidates import PROVENANCE_PREFIX, TURNS

#: a kept dialogue turn (``formation/transcript.py``): the id of the working-memory turn
SAID = "memgate.said."
SAID_TURN = SAID + "turn"
TURN_TYPE = "turn"

#: an observation (``formation/observations.py``)
OBSERVED = "memgate.observed."
OBSERVED_TURN = OBSERVED + "turn"  # the evidence turn's id
OBSERVED_WHEN = (
    OBSERVED + "when"
)  # the resolved time label (2018-05-07 | 2018-W18 | 2018-05 | 2018)
OBSERVED_KIND = OBSERVED + "type"  # event | plan | preference | fact
OBSERVED_BY = OBSERVED + "observer"
OBSERVATION_TYPE = "observation"

#: set on a hit (never stored) that a newer statement about the same subject competes with: the
#: newer one's id (``recall/newer_first.py``)
RECALLED = "memgate.recall."
EARLIER = RECALLED + "earlier_than"

#: reserved keys a caller is shown
VISIBLE = (PROVENANCE_PREFIX, OBSERVED, SAID, RECALLED)


def turns_of(metadata: dict[str, str]) -> set[str]:
    """The turn ids a memory points at (a kept turn, an observation or a formed fact)."""
    out = {t for t in metadata.get(TURNS, "").split(",") if t}
    for key in (SAID_TURN, OBSERVED_TURN):
        if metadata.get(key):
            out.add(metadata[key])
    return out
