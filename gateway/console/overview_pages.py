"""The namespaces and agents overview: every namespace that holds memories (``ListNamespaces``)
with its pending proposals, and every proposing agent with its pending count; each links to the
filtered proposal list, the audit log and search. Escaped like every page."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from urllib.parse import urlencode

from gateway.client import types as t
from gateway.console.pages import csrf_field, h, page


def _link(path: str, label: str, **query: str) -> str:
    return f'<a href="{h(path + "?" + urlencode(query))}">{h(label)}</a>'


def _erase_form(csrf: str) -> str:
    return (
        '<h2>Erase a namespace</h2><form method="post" action="/namespaces/erase" '
        f'id="erase-form" class="actions">{csrf_field(csrf)}'
        '<input type="text" name="namespace" placeholder="namespace" required id="erase-ns"> '
        '<input type="text" name="confirm" placeholder="the same namespace again" required '
        'id="erase-confirm"> <input type="text" name="reason" placeholder="reason" required '
        'id="erase-reason"> <button class="reject" type="submit" id="erase">Erase everything in '
        'it</button></form><p class="meta">Every memory, turn, proposal and review item of the '
        "namespace goes (ForgetNamespace); only the audit of the erasure stays.</p>"
    )


def overview(
    names: t.NamespaceList,
    pending: Sequence[t.Proposal],
    csrf: str,
    error: str = "",
    flash: str = "",
) -> str:
    by_ns = Counter(p.item.namespace for p in pending)
    by_agent = Counter(p.proposer for p in pending)
    every = sorted(set(names.namespaces) | set(by_ns))
    rows = "".join(
        f'<tr id="ns-{h(ns)}"><td>{h(ns)}</td><td>{by_ns.get(ns, 0) or ""}</td>'
        f"<td>{_link('/review', 'proposals', ns=ns)} · {_link('/facts', 'pending facts', ns=ns)}"
        f" · {_link('/audit', 'audit', ns=ns)} · {_link('/search', 'search', ns=ns)}</td></tr>"
        for ns in every
    )
    agents = "".join(
        f"<tr><td>{h(a)}</td><td>{n}</td><td>{_link('/review', 'their proposals', proposer=a)}"
        "</td></tr>"
        for a, n in sorted(by_agent.items())
    )
    more = (
        '<p class="error">More namespaces than listed: narrow with the CLI '
        "(<code>memgate namespaces --prefix</code>).</p>"
        if names.truncated
        else ""
    )
    body = (
        f'<h2>{len(every)} namespace(s)</h2>{more}<table class="list" id="namespaces">'
        f"<tr><th>namespace</th><th>pending proposals</th><th></th></tr>{rows}</table>"
        f'<h2>Proposing agents</h2><table class="list" id="agents"><tr><th>agent</th>'
        f"<th>pending proposals</th><th></th></tr>{agents}</table>"
        '<p class="meta">Namespaces holding at least one active memory, or a pending proposal.'
        "</p>" + _erase_form(csrf)
    )
    return page("Namespaces and agents", body, csrf=csrf, error=error, flash=flash)


def pending_facts(
    ns: str, rows: Sequence[t.PendingFact], csrf: str, error: str = "", flash: str = ""
) -> str:
    """A namespace's facts waiting for a second session (``ListPendingFacts``), each with the id
    a proposer was answered and a button that promotes it now (``ConfirmFact``)."""
    pick = (
        '<form method="get" action="/facts" class="actions">'
        f'<input type="text" name="ns" value="{h(ns)}" placeholder="user/alice" required '
        'id="facts-ns"> <button type="submit">List</button></form>'
    )
    if not ns:
        return page("Pending facts", pick, csrf=csrf, error=error, flash=flash)
    lines = "".join(
        f'<tr id="fact-{h(f.id)}"><td><code>{h(f.id)}</code></td><td>{h(f.fact)}</td>'
        f"<td>{h(', '.join(f.sessions))}</td><td>{f.confidence:.2f}</td>"
        f"<td>{h(' | '.join(f.evidence))}</td><td>"
        f'<form method="post" action="/facts/{h(f.id)}/confirm" class="actions">'
        f'{csrf_field(csrf)}<input type="hidden" name="ns" value="{h(ns)}">'
        '<button class="approve" type="submit">Confirm</button></form></td></tr>'
        for f in rows
    )
    body = (
        f"{pick}<h2>{len(rows)} pending fact(s) in {h(ns)}</h2>"
        '<table class="list" id="facts"><tr><th>id</th><th>fact</th><th>sessions</th>'
        f"<th>confidence</th><th>evidence</th><th></th></tr>{lines}</table>"
        '<p class="meta">Facts proposed (ProposeFact, formation) and seen in one session so far; '
        "a second session promotes one, Confirm promotes it now. A sub-agent was answered an id "
        "of its own for the same row.</p>"
    )
    return page("Pending facts", body, csrf=csrf, error=error, flash=flash)
