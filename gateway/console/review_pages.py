"""The review pages: the proposal list (one row per group of identical proposals, filters,
pages, bulk decisions), a proposal's detail, and the quarantine queue. Everything from the
gateway is escaped (``h``); forms only, no script."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from urllib.parse import quote, urlencode

from gateway.client import types as t
from gateway.console import queue_view as qv
from gateway.console.pages import csrf_field, decision_forms, h, memory_card, page, when

_AGE_LABELS = {
    "": "any age",
    "1h": "older than 1 h",
    "1d": "older than 1 day",
    "7d": "older than 7 days",
}


def _select(name: str, current: str, options: Sequence[tuple[str, str]]) -> str:
    opts = "".join(
        f'<option value="{h(v)}"{" selected" if v == current else ""}>{h(label)}</option>'
        for v, label in options
    )
    return f'<select name="{name}" id="f-{name}">{opts}</select>'


def _filters(f: qv.Filters, proposals: Sequence[t.Proposal]) -> str:
    proposers = sorted({p.proposer for p in proposals} | ({f.proposer} - {""}))
    kinds = sorted({qv.kind_of(p) for p in proposals} | {p.item.layer for p in proposals})
    return (
        '<form method="get" action="/review" id="filters" class="filters">'
        f'<input type="text" name="ns" value="{h(f.namespace)}" placeholder="namespace prefix" '
        'id="f-ns"> '
        + _select("proposer", f.proposer, [("", "any proposer")] + [(p, p) for p in proposers])
        + _select(
            "kind",
            f.kind,
            [("", "any kind"), ("conflict", "conflicts only")] + [(k, k) for k in kinds],
        )
        + _select("age", f.older_than, list(_AGE_LABELS.items()))
        + _select("sort", f.sort, [(s, f"sort: {s}") for s in qv.SORTS])
        + _select("size", str(f.size), [(str(n), f"{n} a page") for n in qv.PAGE_SIZES])
        + ' <button type="submit" id="filter">Filter</button> <a href="/review">clear</a></form>'
    )


def _pager(f: qv.Filters, sel: qv.Page) -> str:
    def link(n: int, label: str, ident: str) -> str:
        return f'<a href="/review?{h(urlencode(f.query(page=n)))}" id="{ident}">{label}</a>'

    prev = link(sel.page - 1, "‹ previous", "prev-page") if sel.page > 1 else ""
    nxt = link(sel.page + 1, "next ›", "next-page") if sel.page < sel.pages else ""
    return (
        f'<p class="pager">{prev} <span id="page-of">page {sel.page} of {sel.pages}</span> '
        f"{nxt}</p>"
    )


def competing_cell(p: t.Proposal) -> str:
    """What the proposal competes with: the active fact on its slot (approving supersedes it),
    with the word overlap and both confidences."""
    rival = p.conflicts_with
    if rival is None:
        return (
            f'<span class="meta">new on {h(p.slot)}</span>'
            if p.slot
            else '<span class="meta">—</span>'
        )
    score = qv.overlap(p.item.content, rival.content)
    return (
        f'<span class="conflict">⚠ {h(p.slot)}</span> <span class="one">{h(rival.content)}</span>'
        f'<span class="meta"> overlap {score:.2f} · confidence {rival.confidence:.2f} → '
        f"{p.item.confidence:.2f}</span>"
    )


def _row(g: qv.Group, now: datetime) -> str:
    p = g.first
    ids = ",".join(g.ids)
    count = len(g.members)
    return (
        f'<tr id="row-{h(p.id)}" class="row">'
        f'<td><input type="checkbox" name="id" value="{h(ids)}" id="pick-{h(p.id)}"></td>'
        f"<td>{h(qv.age(g.oldest, now))}</td><td>{h(p.item.namespace)}</td>"
        f"<td>{h(', '.join(g.proposers))}</td><td>{h(qv.kind_of(p))}</td>"
        f'<td><a href="/proposal/{h(quote(p.id, safe=""))}" class="one" id="open-{h(p.id)}">'
        f"{h(p.item.content)}</a></td>"
        f'<td class="count" id="count-{h(p.id)}">{"×" + str(count) if count > 1 else ""}</td>'
        f"<td>{h(p.item.task_id or '')}</td><td class='competes'>{competing_cell(p)}</td></tr>"
    )


def proposal_list(
    proposals: Sequence[t.Proposal],
    f: qv.Filters,
    queued: int,
    csrf: str,
    flash: str = "",
    truncated: bool = False,
) -> str:
    now = datetime.now(UTC)
    sel = qv.select(proposals, f, now)
    back = "/review?" + urlencode(f.query())
    head = (
        f'<p class="tabs"><strong>{len(proposals)} pending proposal(s)</strong> · '
        f'<a href="/queue" id="queue-link">quarantine queue: {queued} waiting</a></p>'
        + (
            '<p class="error">Showing the oldest 500 pending proposals only: decide or filter '
            "to see the rest.</p>"
            if truncated
            else ""
        )
        + _filters(f, proposals)
        + f'<p class="meta" id="matching">{sel.matching} row(s) match ({sel.proposals} '
        "proposal(s); identical ones are one row)</p>"
    )
    if not sel.groups:
        return page(
            "Review",
            head + '<p id="no-proposals">No pending proposals match.</p>',
            csrf=csrf,
            flash=flash,
        )
    rows = "".join(_row(g, now) for g in sel.groups)
    page_ids = ",".join(i for g in sel.groups for i in g.ids)
    table = (
        '<form method="post" action="/proposals/bulk" id="bulk-form">'
        f'{csrf_field(csrf)}<input type="hidden" name="back" value="{h(back)}">'
        '<table class="list" id="proposals"><tr><th></th><th>age</th><th>namespace</th>'
        "<th>proposer</th><th>kind</th><th>proposed</th><th>#</th><th>task</th>"
        f"<th>competes with (same slot)</th></tr>{rows}</table>"
        '<div class="bulk"><label><input type="checkbox" name="id" '
        f'value="{h(page_ids)}" id="pick-page"> all {len(sel.groups)} row(s) on this page</label> '
        '<input type="text" name="reason" placeholder="reason (audited with '
        'each item)" required id="bulk-reason"> '
        '<button class="approve" type="submit" name="action" value="approve" id="bulk-approve">'
        "Approve selected</button> "
        '<button class="reject" type="submit" name="action" value="reject" id="bulk-reject">'
        "Reject selected</button></div></form>"
    )
    return page("Review", head + _pager(f, sel) + table, csrf=csrf, flash=flash)


def _as_memory(p: t.Proposal) -> t.Memory:
    i = p.item
    return t.Memory(
        id=f"proposal {p.id}",
        namespace=i.namespace,
        layer=i.layer,
        content=i.content,
        type=i.type,
        importance=i.importance,
        confidence=i.confidence,
        source_agent=p.proposer,
        source_session=i.session_id,
        task_id=i.task_id,
        created_at=p.created_at,
        updated_at=p.created_at,
        metadata=dict(i.metadata),
        evidence=list(i.evidence),
        status="proposed",
        slot=p.slot,
    )


def proposal_detail(p: t.Proposal, twins: Sequence[t.Proposal], csrf: str) -> str:
    approve = "Approve"
    if p.conflicts_with is not None:
        approve = "Approve and supersede"
        score = qv.overlap(p.item.content, p.conflicts_with.content)
        rival = memory_card(
            p.conflicts_with,
            f"conflicts on {p.slot} (overlap {score:.2f}): approving supersedes it",
        )
    else:
        rival = (
            f'<p class="meta">No active fact on its slot {h(p.slot)}: approving adds a new one.</p>'
            if p.slot
            else '<p class="meta">No slot found: nothing stored is superseded by approving it. '
            '<a href="/search?'
            + h(urlencode({"ns": p.item.namespace, "q": p.item.content[:200]}))
            + '">Search similar memories</a> (audited as a console recall).</p>'
        )
    body = (
        f'<section class="card proposal" id="proposal-{h(p.id)}">'
        f'<div class="side"><div>{memory_card(_as_memory(p), "proposed")}</div>'
        f"<div>{rival}</div></div>"
        f"{decision_forms('proposals', p.id, csrf, p.item.content, approve)}</section>"
    )
    others = [x for x in twins if x.id != p.id]
    if others:
        ids = ",".join([p.id] + [x.id for x in others])
        items = "".join(
            f"<li>{h(x.id)} by {h(x.proposer)}, {h(when(x.created_at))}</li>" for x in others
        )
        body += (
            f'<h2 id="twins">{len(others)} identical proposal(s)</h2><ul>{items}</ul>'
            '<form method="post" action="/proposals/bulk">'
            f'{csrf_field(csrf)}<input type="hidden" name="id" value="{h(ids)}">'
            '<input type="hidden" name="back" value="/review">'
            '<input type="text" name="reason" placeholder="reason" required id="twins-reason"> '
            '<button class="approve" name="action" value="approve" id="twins-approve">'
            f"Approve all {len(others) + 1}</button> "
            '<button class="reject" name="action" value="reject" id="twins-reject">'
            f"Reject all {len(others) + 1}</button></form>"
        )
    return page(
        f"Proposal {p.id}", '<p><a href="/review">‹ all proposals</a></p>' + body, csrf=csrf
    )


def queue_list(queue: Sequence[t.Memory], csrf: str, flash: str = "") -> str:
    now = datetime.now(UTC)
    rows = "".join(
        f'<tr id="queued-{h(m.id)}" class="row">'
        f'<td><input type="checkbox" name="id" value="{h(m.id)}" id="pick-{h(m.id)}"></td>'
        f"<td>{h(qv.age(m.updated_at, now))}</td><td>{h(m.namespace)}</td>"
        f"<td>{h(m.source_agent)}</td><td>{h(m.layer)}</td>"
        f'<td><a class="one" href="/queue/{h(quote(m.id, safe=""))}" id="open-{h(m.id)}">'
        f'{h(m.content)}</a></td><td><span class="one">{h(m.metadata.get("review_reason", ""))}'
        "</span></td></tr>"
        for m in queue
    )
    body = (
        f'<p class="tabs"><a href="/review">‹ proposals</a> · <strong>{len(queue)} '
        "quarantined or held memory(ies)</strong></p>"
    )
    if not queue:
        body += '<p id="no-review">Nothing waits for review.</p>'
    else:
        body += (
            '<form method="post" action="/review/bulk" id="queue-form">'
            f'{csrf_field(csrf)}<input type="hidden" name="back" value="/queue">'
            '<table class="list" id="queue"><tr><th></th><th>age</th><th>namespace</th>'
            f"<th>source</th><th>layer</th><th>memory</th><th>why</th></tr>{rows}</table>"
            '<div class="bulk"><input type="text" name="reason" placeholder="reason" required '
            'id="queue-reason"> <button class="approve" name="action" value="approve" '
            'id="queue-approve">Release selected</button> <button class="reject" name="action" '
            'value="reject" id="queue-reject">Forget selected</button></div></form>'
        )
    return page("Quarantine queue", body, csrf=csrf, flash=flash)


def queued_detail(m: t.Memory, csrf: str) -> str:
    why = m.metadata.get("review_reason", "")
    body = (
        '<p><a href="/queue">‹ quarantine queue</a></p>'
        f'<section class="card review-item" id="review-{h(m.id)}">'
        f'<p class="meta">Queued: {h(why)}</p>{memory_card(m)}'
        f"{decision_forms('review', m.id, csrf, m.content)}</section>"
    )
    return page(f"Queued memory {m.id}", body, csrf=csrf)
