"""What recall reads of the settings, and nothing else: built once from them
(the gateway's ``Settings.recall()``) and passed down to ``Recaller`` and
``RecallEngine`` (also in a recall worker process)."""

from __future__ import annotations

from dataclasses import dataclass, field

from gateway.core.model.limits import Limits
from gateway.core.truth.judge import UpdateJudge


@dataclass(frozen=True, slots=True)
class RecallSettings:
    limits: Limits = field(default_factory=Limits)
    master_agent: str = "master"
    default_token_budget: int = 512
    #: people's names masked in the query's dense embedding (``query_text.py``)
    dense_mask_names: bool = True
    half_life_days: float = 7.0
    rank_nudge: float = 0.02
    #: fusion weights (``fusion.py``): dialogue turns and events; short facts and skills
    w_dense: float = 0.8
    w_lexical: float = 0.2
    w_fact_dense: float = 1.0
    w_fact_lexical: float = 0.02
    speaker_boost: float = 0.3
    #: the embedder reads Chinese as well as English: a CJK query ranks by its cosine, with this
    #: lexical weight (``fusion.FusionWeights.multilingual_cjk_lexical``)
    multilingual: bool = False
    w_cjk_lexical: float = 0.0
    query_embed_threads: int = 1
    query_embed_batch: int = 32
    #: the lexical search runs after the vector search, in the load's round trip (Neo4j)
    lexical_after_dense: bool = False
    #: two statements about one subject that the slots did not settle: the newer first, the older
    #: labelled "earlier, as of …" (``newer_first.py``); 0 = off
    compete_cosine: float = 0.5
    #: what changes what, judged by meaning (``truth/judge.py``); None: the rule above decides
    judge: UpdateJudge | None = None
    cache_ttl_s: float = 30.0
    cache_entries: int = 512
