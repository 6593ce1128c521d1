"""The console's list logic and version diff, without a browser: filters, grouping of identical
proposals, paging, the query string it keeps, and word diffs (escaped)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from gateway.client import types as t
from gateway.console import diff
from gateway.console import queue_view as qv

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


def _p(
    pid: str, ns: str, text: str, proposer: str = "a", hours: float = 0, **kw: object
) -> t.Proposal:
    item = t.ProposedItem(namespace=ns, layer="semantic", content=text, type="note")
    return t.Proposal(pid, proposer, item, "pending", created_at=NOW - timedelta(hours=hours), **kw)  # type: ignore[arg-type]


def test_filters_group_and_pages() -> None:
    rival = t.Memory(id="m", namespace="user/x", layer="semantic", content="The user lives in Oslo")
    ps = [_p(f"p{i}", "user/x", f"fact {i}", hours=i) for i in range(30)]
    ps += [_p("d1", "user/x", "Same  thing", "b", 50), _p("d2", "user/x", "same thing", "c", 1)]
    ps += [_p("c1", "user/y", "The user lives in Rome", "b", 2, conflicts_with=rival)]
    page = qv.select(ps, qv.Filters.of({}), NOW)
    assert (page.matching, page.proposals, page.pages, len(page.groups)) == (32, 33, 2, 25)
    assert page.groups[0].first.id == "d1"  # oldest first: the twins' oldest is 50 h
    twins = next(
        g for g in qv.select(ps, qv.Filters.of({"size": "100"}), NOW).groups if len(g.members) > 1
    )
    assert twins.ids == ["d1", "d2"] and twins.proposers == ["b", "c"]
    assert qv.select(ps, qv.Filters.of({"page": "9"}), NOW).page == 2  # clamped
    only = qv.select(ps, qv.Filters.of({"kind": "conflict"}), NOW)
    assert [g.first.id for g in only.groups] == ["c1"]
    assert qv.select(ps, qv.Filters.of({"proposer": "b", "ns": "user/y"}), NOW).matching == 1
    old = qv.select(ps, qv.Filters.of({"age": "1d"}), NOW)  # 24..29 h, and d1 (not d2, 1 h)
    assert (old.matching, old.proposals) == (7, 7)
    newest = qv.select(ps, qv.Filters.of({"sort": "newest"}), NOW)
    assert newest.groups[0].first.id == "p0"


def test_bad_query_values_fall_back() -> None:
    f = qv.Filters.of({"size": "7", "page": "-3", "sort": "drop table", "age": "9y"})
    assert (f.size, f.page, f.sort, f.older_than) == (25, 1, "oldest", "")
    assert qv.Filters.of({"ns": "user/", "page": "3"}).query(page=1) == {"ns": "user/"}


def test_overlap_and_age() -> None:
    assert qv.overlap("The user lives in Paris", "The user lives in Rome") == 4 / 6
    assert qv.overlap("我住在北京", "我住在上海") == 3 / 7
    assert qv.age(NOW - timedelta(minutes=90), NOW) == "1h"


def test_diff_marks_words_and_escapes() -> None:
    html = diff.text_diff("The user lives in Paris", "The user lives in <b>Rome</b>")
    assert "<del>Paris</del>" in html and "<ins>&lt;b&gt;Rome&lt;/b&gt;</ins>" in html
    assert diff.text_diff("我住在北京", "我住在上海") == "我住在<del>北京</del><ins>上海</ins>"
