"""What a recall reads off its query text, read once per recall (``read``): the layers it routes
to, its time cues, the text that is embedded (people's names masked), and the fusion weights for
its language. The pipeline (``recall_engine.py``) passes this reading on instead of handing the
raw text to each step."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from gateway.core.model.models import Layer
from gateway.core.recall import query_text, routing, timecues
from gateway.core.recall.fusion import FusionWeights
from gateway.core.recall.recall_cache import RecallQuery


@dataclass(frozen=True, slots=True)
class QueryReading:
    text: str
    layers: tuple[Layer, ...]
    cues: timecues.Cues
    dense: str  # what is embedded
    weights: FusionWeights

    def names(self, person: str) -> bool:
        """Whether the query names ``person`` (a turn of theirs gets the speaker boost)."""
        return query_text.names(self.text, person)


def read(q: RecallQuery, now: datetime, fusion: FusionWeights, mask_names: bool) -> QueryReading:
    layers = q.layers or routing.route(q.query)
    if q.session_id and Layer.WORKING not in layers:
        layers = (*layers, Layer.WORKING)
    return QueryReading(
        text=q.query,
        layers=tuple(layers),
        cues=timecues.cues(q.query, now),
        dense=query_text.dense_text(q.query) if mask_names else q.query,
        weights=fusion.for_query(q.query),
    )
