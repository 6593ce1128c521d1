"""The proposal list as the console shows it: filtered, identical proposals grouped, sorted and
cut into pages. Pure functions over what ``ListProposals`` returned (no gateway call here)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from gateway.client import types as t

PAGE_SIZES = (25, 50, 100)
AGES = {"": None, "1h": timedelta(hours=1), "1d": timedelta(days=1), "7d": timedelta(days=7)}
SORTS = ("oldest", "newest", "count")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_CJK = re.compile(r"[\u3400-\u9fff]")


@dataclass(frozen=True)
class Filters:
    """What the reviewer asked for (from the query string; anything unknown falls back)."""

    namespace: str = ""  # a prefix: "user/" or "user/alice"
    proposer: str = ""
    kind: str = ""  # a layer ("semantic"), a type, or "conflict"
    older_than: str = ""  # a key of AGES
    sort: str = "oldest"
    page: int = 1
    size: int = PAGE_SIZES[0]

    @classmethod
    def of(cls, query: Mapping[str, str]) -> Filters:
        def number(key: str, default: int) -> int:
            raw = query.get(key, "")
            return int(raw) if raw.isdigit() and len(raw) < 6 else default

        size = number("size", PAGE_SIZES[0])
        return cls(
            namespace=query.get("ns", "").strip()[:200],
            proposer=query.get("proposer", "").strip()[:128],
            kind=query.get("kind", "").strip()[:64],
            older_than=query.get("age", "") if query.get("age", "") in AGES else "",
            sort=query.get("sort", "") if query.get("sort", "") in SORTS else "oldest",
            page=max(1, number("page", 1)),
            size=size if size in PAGE_SIZES else PAGE_SIZES[0],
        )

    def query(self, **changes: object) -> dict[str, str]:
        """The query string of these filters with ``changes`` (empty values left out)."""
        values = {
            "ns": self.namespace,
            "proposer": self.proposer,
            "kind": self.kind,
            "age": self.older_than,
            "sort": self.sort if self.sort != "oldest" else "",
            "page": str(self.page) if self.page != 1 else "",
            "size": str(self.size) if self.size != PAGE_SIZES[0] else "",
        }
        values.update({k: str(v) for k, v in changes.items()})
        return {k: v for k, v in values.items() if v and not (k == "page" and v == "1")}


@dataclass
class Group:
    """Identical proposals (same namespace, layer, type and text): shown once, decided together."""

    first: t.Proposal
    members: list[t.Proposal] = field(default_factory=list)

    @property
    def ids(self) -> list[str]:
        return [p.id for p in self.members]

    @property
    def proposers(self) -> list[str]:
        return sorted({p.proposer for p in self.members})

    @property
    def oldest(self) -> datetime | None:
        stamps = [p.created_at for p in self.members if p.created_at]
        return min(stamps) if stamps else None


@dataclass
class Page:
    groups: list[Group]
    matching: int  # groups that pass the filters
    proposals: int  # proposals in those groups
    page: int
    pages: int


def kind_of(p: t.Proposal) -> str:
    i = p.item
    return f"{i.layer}/{i.type}" if i.type else i.layer


def _key(p: t.Proposal) -> tuple[str, str, str, str]:
    i = p.item
    return (i.namespace, i.layer, i.type, " ".join(i.content.split()).casefold())


def group(proposals: Sequence[t.Proposal]) -> list[Group]:
    groups: dict[tuple[str, str, str, str], Group] = {}
    for p in proposals:
        g = groups.setdefault(_key(p), Group(p))
        g.members.append(p)
    return list(groups.values())


def matches(p: t.Proposal, f: Filters, now: datetime) -> bool:
    i = p.item
    if f.namespace and not i.namespace.startswith(f.namespace):
        return False
    if f.proposer and p.proposer != f.proposer:
        return False
    if f.kind == "conflict":
        if p.conflicts_with is None:
            return False
    elif f.kind and f.kind not in (i.layer, i.type, kind_of(p)):
        return False
    limit = AGES.get(f.older_than)
    return not (limit and p.created_at and now - p.created_at < limit)


def select(proposals: Sequence[t.Proposal], f: Filters, now: datetime | None = None) -> Page:
    now = now or datetime.now(UTC)
    groups = group([p for p in proposals if matches(p, f, now)])
    epoch = datetime.min.replace(tzinfo=UTC)
    if f.sort == "count":
        groups.sort(key=lambda g: (-len(g.members), g.oldest or epoch))
    else:
        groups.sort(key=lambda g: g.oldest or epoch, reverse=f.sort == "newest")
    pages = max(1, -(-len(groups) // f.size))
    page = min(f.page, pages)
    shown = groups[(page - 1) * f.size : page * f.size]
    return Page(shown, len(groups), sum(len(g.members) for g in groups), page, pages)


def age(stamp: datetime | None, now: datetime | None = None) -> str:
    """ "42s", "17m", "5h", "3d" (empty without a stamp)."""
    if stamp is None:
        return ""
    seconds = max(0, int(((now or datetime.now(UTC)) - stamp).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def words(text: str) -> set[str]:
    """Casefolded words; each Chinese character counts as a word."""
    out = set()
    for w in _WORD.findall(text.casefold()):
        out.update(_CJK.findall(w) if _CJK.search(w) else [w])
    return out


def overlap(a: str, b: str) -> float:
    """How much two texts share: Jaccard over their words (0..1). The console has no embedder;
    this is a plain, explainable score shown beside the fact a proposal competes with."""
    wa, wb = words(a), words(b)
    return len(wa & wb) / len(wa | wb) if wa | wb else 0.0
