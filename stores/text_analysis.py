"""The one text analyzer behind lexical search in every record store (SQLite FTS5, Neo4j Lucene).

Both engines index the *output* of this analyzer with a whitespace tokenizer and rank with BM25,
so they agree on what a term is; only the engines' BM25 details differ (see ``keyword_search``).

* Normalisation: NFKC, then case-folded; typographic apostrophes become ``'``.
* Words (scripts written with spaces): English stop words dropped, the rest Snowball-stemmed
  (PyStemmer, ``english``), so "certificate"/"certificates" and "running"/"runs" meet. The past
  forms of irregular verbs and a few irregular plurals become their base form first
  (``BASE_FORMS``), which no stemmer does: "bought"/"buy", "went"/"go", "children"/"child".
* CJK runs (Han, kana, Hangul: scripts written without spaces): indexed text keeps every
  character, every overlapping bigram and the longer words of jieba's segmentation ("瑞金医院",
  "心内科"); a query is cut into jieba's words, so a one-character word meets a character, a
  two-character one a bigram and a longer one a word, and the bigrams that straddle two of the
  query's words ("静的", "的职") meet nothing by accident. Measured against bigrams alone and
  jieba alone on ``bench/multilingual_eval.py`` (dev people, SQLite FTS5 and Neo4j alike:
  docs/BENCHMARKS-HISTORY.md, "Chinese lexical search").

``document_terms(text)`` is what a store indexes (a list: term frequencies count);
``query_terms(text)`` is what it looks up (distinct terms, in order).
"""

from __future__ import annotations

import functools
import logging
import re
import threading
import time
import unicodedata
from collections.abc import Iterator, Sequence

import jieba
import Stemmer

from gateway.core.model.models import Layer, Memory

__all__ = [
    "ANALYZER_VERSION",
    "BASE_FORMS",
    "STOPWORDS",
    "document_terms",
    "index_text",
    "normalise",
    "query_terms",
]

#: the terms this analyzer makes; a store whose index was built by another version re-indexes
#: on start (1: before ``BASE_FORMS``; 2: CJK bigrams alone, before jieba's words)
ANALYZER_VERSION = 3

# Hiragana, Katakana, CJK Extension A, CJK Unified Ideographs, CJK Compatibility, Hangul syllables.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_TOKEN = re.compile(rf"(?P<cjk>[{_CJK}]+)|(?P<word>[^\W_{_CJK}]+(?:'[^\W_{_CJK}]+)*)")

#: The Snowball project's English stop word list (the words too common to rank by).
_STOPWORDS_TEXT = """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she
    her hers herself it its itself they them their theirs themselves what which who whom this that
    these those am is are was were be been being have has had having do does did doing would should
    could ought i'm you're he's she's it's we're they're i've you've we've they've i'd you'd he'd
    she'd we'd they'd i'll you'll he'll she'll we'll they'll isn't aren't wasn't weren't hasn't
    haven't hadn't doesn't don't didn't won't wouldn't shan't shouldn't can't cannot couldn't
    mustn't let's that's who's what's here's there's when's where's why's how's a an the and but if
    or because as until while of at by for with about against between into through during before
    after above below to from up down in out on off over under again further then once here there
    when where why how all any both each few more most other some such no nor not only own same so
    than too very
"""
STOPWORDS = frozenset(_STOPWORDS_TEXT.split())

_STEMMER = Stemmer.Stemmer("english")

# "base past participle", the past forms of common irregular verbs. Left out: forms that are as
# often another word in conversation ("rose", "drew", "ground", "wound", "lay", "shot", "lit",
# "spoke", "bore"), forms asked about in the same form ("born"), and forms equal to their base
# ("cut", "put").
_IRREGULAR_VERBS = """
    arise arose arisen|awake awoke awoken|beat - beaten|become became -|begin began
    begun|bend bent bent|bite bit bitten|bleed bled bled|blow blew blown|break broke broken|breed
    bred bred|bring brought brought|build built built|burn burnt burnt|buy bought bought|catch
    caught caught|choose chose chosen|cling clung clung|come came -|creep crept crept|deal dealt
    dealt|dig dug dug|do did done|draw - drawn|dream dreamt dreamt|drink drank drunk|drive drove
    driven|eat ate eaten|fall fell fallen|feed fed fed|feel felt felt|fight fought fought|find
    found found|flee fled fled|fly flew flown|forbid forbade forbidden|forget forgot forgotten|
    forgive forgave forgiven|freeze froze frozen|get got gotten|give gave given|go went gone|grow
    grew grown|hang hung hung|hear heard heard|hide hid hidden|hold held held|keep kept kept|kneel
    knelt knelt|know knew known|lead led led|leap leapt leapt|learn learnt learnt|leave left left|
    lend lent lent|lose lost lost|make made made|mean meant meant|meet met met|pay paid paid|ride
    rode ridden|ring rang rung|rise - risen|run ran -|say said said|see saw seen|seek sought
    sought|sell sold sold|send sent sent|shake shook shaken|shine shone shone|show - shown|shrink
    shrank shrunk|sing sang sung|sink sank sunk|sit sat sat|sleep slept slept|slide slid slid|
    speak - spoken|speed sped sped|spend spent spent|spill spilt spilt|spin spun spun|spit spat
    spat|spring sprang sprung|stand stood stood|steal stole stolen|stick stuck stuck|sting stung
    stung|stink stank stunk|strike struck struck|strive strove striven|swear swore sworn|sweep
    swept swept|swim swam swum|swing swung swung|take took taken|teach taught taught|tear tore
    torn|tell told told|think thought thought|throw threw thrown|understand understood understood|
    wake woke woken|wear wore worn|weave wove woven|weep wept wept|win won won|write wrote written|
    undertake undertook undertaken|overcome overcame -|mistake mistook mistaken|withdraw withdrew
    withdrawn
"""
_IRREGULAR_PLURALS = """
    child children|man men|woman women|foot feet|tooth teeth|mouse mice|goose geese|wife wives|
    knife knives|wolf wolves
"""


def _base_forms() -> dict[str, str]:
    forms: dict[str, str] = {}
    for table in (_IRREGULAR_VERBS, _IRREGULAR_PLURALS):
        for group in table.split("|"):
            base, *others = group.split()
            forms.update((other, base) for other in others if other not in ("-", base))
    return forms


#: an irregular form -> its base form, mapped before stemming (documents and queries alike)
BASE_FORMS = _base_forms()


def normalise(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold().replace("\u2019", "'")


def _runs(text: str) -> Iterator[tuple[bool, str]]:
    """(is_cjk, run) for every token run of the normalised text."""
    for m in _TOKEN.finditer(normalise(text)):
        if m.group("cjk"):
            yield True, m.group("cjk")
        else:
            yield False, m.group("word")


def _bigrams(run: str) -> list[str]:
    return [run[i : i + 2] for i in range(len(run) - 1)]


_SEGMENTER_LOCK = threading.Lock()


@functools.cache
def _segmenter() -> jieba.Tokenizer:
    """jieba's default tokenizer, its dictionary loaded once (~0.7 s, at the first CJK text;
    ``gateway.core.truth.cjk_names`` reads the same one)."""
    with _SEGMENTER_LOCK:
        jieba.setLogLevel(logging.WARNING)
        jieba.dt.initialize()
        return jieba.dt


def _cjk_document_terms(run: str) -> list[str]:
    """Every character and bigram of a CJK run, and jieba's words of it longer than two."""
    words = [w for w in _segmenter().cut_for_search(run) if len(w) > 2]
    return [*run, *_bigrams(run), *words]


def _cjk_query_terms(run: str) -> list[str]:
    """jieba's words of a CJK run (each meets a character, a bigram or a longer word)."""
    if len(run) == 1:
        return [run]
    return [w for w in _segmenter().lcut(run) if w.strip()]


def _word(run: str) -> str | None:
    """The stemmed term of a word, or None for a stop word."""
    if run in STOPWORDS:
        return None
    if "'" in run:  # possessives and contractions: "leo's" -> "leo"
        head = run.split("'", 1)[0]
        if head in STOPWORDS or not head:
            return None
        run = head
    run = BASE_FORMS.get(run, run)
    if run in STOPWORDS:  # "did", "done" -> "do"
        return None
    stem: str = _STEMMER.stemWord(run)
    return stem


def document_terms(text: str) -> list[str]:
    """The terms to index for ``text``, repeats kept (term frequency counts in BM25)."""
    terms: list[str] = []
    for cjk, run in _runs(text):
        if cjk:
            terms.extend(_cjk_document_terms(run))
        elif (term := _word(run)) is not None:
            terms.append(term)
    return terms


def query_terms(text: str) -> list[str]:
    """Distinct terms to look up for a query, in order: stemmed words minus stop words, the
    words of jieba's segmentation of CJK runs. Empty when only stop words are left."""
    kept: list[str] = []
    for cjk, run in _runs(text):
        if cjk:
            kept.extend(_cjk_query_terms(run))
        elif (term := _word(run)) is not None:
            kept.append(term)
    return list(dict.fromkeys(kept))


def index_text(memory: Memory) -> str:
    """The text a store indexes for a memory: its content, and the conversational context the
    applier attached to it (``Memory.context``: previous turns, speaker, date), if any."""
    if memory.context:
        return f"{memory.context}\n{memory.content}"
    return memory.content


#: a lexical search over fewer memories than this keeps every term (``most_documents``)
COMMON_MIN_DOCS = 200
#: the embedded store's lexical search ranks every match under this many searched memories, and
#: past it the best candidates only (``stores.sqlite_fts_window``; the vector side switches to
#: IVF at the same size, ``stores.faiss_index.APPROX_MIN``)
LEXICAL_APPROX_MIN = 32_768
#: past ``LEXICAL_APPROX_MIN``, a query term in more than this many memories of a searched
#: namespace has its newest ``TERM_WINDOW`` matches there as candidates
TERM_WINDOW = 1_000


def most_documents(searched: int, common: float) -> int | None:
    """The most memories a query term may be in, of the ``searched`` ones, and still be
    searched; more, and it is searched like a stop word (a speaker's name in every turn adds
    thousands of matches and nothing to the ranking). None: keep every term (``common`` is 0, or
    fewer than ``COMMON_MIN_DOCS`` memories are searched). The same rule on every record store.
    (An absolute bound was measured and left out: at 2,000 it cut the lexical search in one
    namespace of 1M turns from 144 to 22 ms, but a user's few memories searched beside a large
    ``global`` lost their names to it. Large scopes are searched in two steps instead:
    ``LEXICAL_APPROX_MIN``; docs/SCALING.md, "Vectors on demand".)"""
    if common <= 0 or searched < COMMON_MIN_DOCS:
        return None
    return int(common * searched)


class ScopeStats:
    """What the lexical search of a scope (its namespaces and layers) needs to know, not to the
    row, remembered for a while (both stores; a stale figure only moves a term across the
    common-term line for that while):

    * how many memories it covers (the active ones of its namespaces and layers), for ``ttl_s``:
      ``most_documents`` needs the size, and counting 10k index entries costs ~1 ms a recall;
    * in how many of its namespaces' memories each query term is, counted up to the
      ``most_documents`` bound of the time, for ``term_ttl_s`` (``term_count``): an agent asks
      about the same names and subjects again and again (65% of the question terms of
      ``bench/dialogues`` were asked before in the same conversation), and each count is an
      index probe (on Neo4j, ~0.5 ms of a recall's lexical statement when they are remembered).
    """

    def __init__(
        self,
        ttl_s: float = 5.0,
        entries: int = 1024,
        term_ttl_s: float = 30.0,
        terms: int = 16_384,
    ) -> None:
        self._ttl = ttl_s
        self._entries = entries
        self._term_ttl = term_ttl_s
        self._max_terms = terms
        self._sizes: dict[tuple[tuple[str, ...], tuple[str, ...]], tuple[float, int]] = {}
        # (namespaces, term) -> (when, the bound it was counted against, its count up to bound+1)
        self._terms: dict[tuple[tuple[str, ...], str], tuple[float, int, int]] = {}

    @staticmethod
    def key(
        namespaces: Sequence[str], layers: Sequence[Layer]
    ) -> tuple[tuple[str, ...], tuple[str, ...]]:
        return tuple(namespaces), tuple(Layer(v).value for v in layers)

    def cached(self, key: tuple[tuple[str, ...], tuple[str, ...]]) -> int | None:
        hit = self._sizes.get(key)
        if hit is None or time.monotonic() - hit[0] >= self._ttl:
            return None
        return hit[1]

    def remember(self, key: tuple[tuple[str, ...], tuple[str, ...]], size: int) -> int:
        """Keep ``size`` for ``ttl_s``; a scope past ``LEXICAL_APPROX_MIN`` for 120x longer
        (10 min by default): its count walks an index of that many entries (50-100 ms at 1M, the
        SQLite thread held), and a few thousand more or fewer memories move no line that
        matters there."""
        if len(self._sizes) >= self._entries:
            self._sizes.clear()
        when = time.monotonic()
        if size >= LEXICAL_APPROX_MIN:
            when += 119 * self._ttl
        self._sizes[key] = (when, int(size))
        return int(size)

    def term_count(self, namespaces: Sequence[str], term: str, most: int) -> int | None:
        """In how many memories of ``namespaces`` ``term`` is, as far as the bound ``most``
        needs (``most + 1``: more than ``most``), if it was counted less than ``term_ttl_s``
        ago: an exact count (under the bound of its time) holds for any bound, a capped one
        only for a bound no higher than its own (the scope's size moves with every write)."""
        hit = self._terms.get((tuple(namespaces), term))
        if hit is None or time.monotonic() - hit[0] >= self._term_ttl:
            return None
        _, bound, found = hit
        if found <= bound:
            return found
        return most + 1 if most <= bound else None

    def remember_term(self, namespaces: Sequence[str], term: str, most: int, found: int) -> None:
        """``found``: the term's count in ``namespaces``, counted up to ``most + 1``."""
        if len(self._terms) >= self._max_terms:
            self._terms.clear()
        self._terms[(tuple(namespaces), term)] = (time.monotonic(), most, min(found, most + 1))
