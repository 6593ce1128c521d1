"""The review console's pages, rendered on the server. Every value that came from the gateway
(memories are hostile text) goes through ``h()``; there is no JavaScript at all."""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from datetime import datetime
from urllib.parse import quote

from gateway.client import types as t
from gateway.console import diff

CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d2430;background:#f6f7f9}
header{background:#1d2430;color:#fff;padding:.6em 1.2em;display:flex;gap:1.2em;align-items:center}
header a{color:#cfe0ff;text-decoration:none}header form{margin-left:auto}
main{padding:1em 1.5em;max-width:1400px}
h1{font-size:1.3em}h2{font-size:1.1em;margin-top:1.6em}
table{border-collapse:collapse;width:100%;background:#fff}
td,th{border:1px solid #d9dde3;padding:.35em .5em;vertical-align:top;text-align:left}
th{background:#eef1f5}
.card{background:#fff;border:1px solid #d9dde3;border-radius:6px;padding:.8em 1em;margin:.8em 0}
.side{display:grid;grid-template-columns:1fr 1fr;gap:1em}
.content{white-space:pre-wrap;word-break:break-word;font-family:ui-monospace,monospace;
 background:#fbfbf4;border:1px solid #ece9c8;padding:.5em}
.meta{color:#59626f;font-size:.92em}
.actions{display:flex;flex-wrap:wrap;gap:.8em;margin-top:.6em}
.actions form{display:flex;gap:.4em;align-items:flex-start}
input[type=text],input[type=password],textarea{font:inherit;padding:.3em}
textarea{width:28em;height:5em}
button{font:inherit;padding:.3em .9em;cursor:pointer}
.approve{background:#d8f5dd}.reject{background:#fbdede}.edit{background:#e4ecff}
.flash{background:#fff6d6;border:1px solid #e8d48a;padding:.5em 1em}
.error{background:#fde2e2;border:1px solid #e6a5a5;padding:.5em 1em}
.state-open{color:#b00020;font-weight:bold}.state-closed{color:#176d2c}
.list td,.list th{padding:.2em .4em;white-space:nowrap;font-size:.93em}
.list td .one,.list td a.one{display:inline-block;max-width:min(34em,20vw);overflow:hidden;
 text-overflow:ellipsis;white-space:nowrap;vertical-align:bottom}
.list td.competes{white-space:normal;min-width:16em}
.list .count{font-weight:bold;color:#8a4b00}.conflict{color:#b00020;font-weight:bold}
.filters,.bulk,.pager,.tabs{margin:.5em 0}.filters select,.filters input{margin-right:.3em}
.version{background:#fff;border:1px solid #d9dde3;border-radius:6px;padding:.4em 1em;
 margin:.6em 0}.version h3{font-size:1em;margin:.2em 0}
del{background:#fbdede;text-decoration:line-through}ins{background:#d8f5dd;text-decoration:none}
"""


def h(value: object) -> str:
    """Escaped for HTML text and attribute values alike."""
    return html.escape("" if value is None else str(value), quote=True)


def when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S UTC") if value else ""


def page(title: str, body: str, *, csrf: str = "", flash: str = "", error: str = "") -> str:
    nav = ""
    if csrf:
        nav = (
            '<a href="/review" id="nav-review">Proposals</a>'
            '<a href="/queue" id="nav-queue">Quarantine</a>'
            '<a href="/namespaces" id="nav-namespaces">Namespaces</a><a href="/search">Search</a>'
            '<a href="/audit">Audit</a><a href="/stats">Stats</a>'
            f'<form method="post" action="/logout">{csrf_field(csrf)}'
            '<button type="submit" id="logout">Log out</button></form>'
        )
    notes = (f'<p class="flash" id="flash">{h(flash)}</p>' if flash else "") + (
        f'<p class="error" id="error">{h(error)}</p>' if error else ""
    )
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{h(title)} · memgate console</title>"
        '<link rel="stylesheet" href="/static/console.css"></head><body>'
        f"<header><strong>memgate console</strong>{nav}</header>"
        f"<main><h1>{h(title)}</h1>{notes}{body}</main></body></html>"
    )


def csrf_field(token: str) -> str:
    return f'<input type="hidden" name="csrf" value="{h(token)}">'


def login(csrf: str, target: str, agent: str, error: str = "") -> str:
    body = (
        f"<p>Gateway <code>{h(target)}</code>. Log in with the API key of the master agent "
        f"<code>{h(agent)}</code>; the console then calls the gateway as the master.</p>"
        f'<form method="post" action="/login" id="login-form">{csrf_field(csrf)}'
        '<label>API key <input type="password" name="api_key" id="api_key" '
        'autocomplete="current-password"></label> '
        '<button type="submit" id="login">Log in</button></form>'
    )
    return page("Log in", body, error=error)


def memory_card(m: t.Memory, title: str = "") -> str:
    link = f'<a href="/memory/{h(quote(m.id, safe=""))}">{h(m.id)}</a>'
    rows = [
        ("id", h(m.id) if m.status == "proposed" else link),
        ("namespace", h(m.namespace)),
        ("layer / type", f"{h(m.layer)} / {h(m.type)}"),
        ("status / version", f"{h(m.status)} / v{h(m.version)}"),
        ("importance / confidence", f"{m.importance:.2f} / {m.confidence:.2f}"),
        ("source", f"agent {h(m.source_agent)}, session {h(m.source_session or '-')}"),
        ("task", h(m.task_id or "-")),
        ("written", h(when(m.updated_at))),
    ]
    if m.slot:
        rows.append(("slot", h(m.slot) + (f" = {h(m.slot_value)}" if m.slot_value else "")))
    if m.evidence:
        rows.append(("evidence", "<br>".join(h(e) for e in m.evidence)))
    if m.metadata:
        rows.append(("metadata", "<br>".join(f"{h(k)} = {h(v)}" for k, v in m.metadata.items())))
    head = f"<strong>{h(title)}</strong>" if title else ""
    table = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows)
    return f'<div>{head}<div class="content">{h(m.content)}</div><table>{table}</table></div>'


def decision_forms(kind: str, key: str, csrf: str, content: str, approve: str = "Approve") -> str:
    """Approve, reject and edit forms; each needs a reason (it goes to the audit log)."""
    base = f"/{kind}/{quote(key, safe='')}"
    slug = h(key)
    return (
        '<div class="actions">'
        f'<form method="post" action="{h(base)}/approve">{csrf_field(csrf)}'
        f'<input type="text" name="reason" placeholder="reason" required id="approve-reason-{slug}">'
        f'<button class="approve" type="submit" id="approve-{slug}">{h(approve)}</button></form>'
        f'<form method="post" action="{h(base)}/reject">{csrf_field(csrf)}'
        f'<input type="text" name="reason" placeholder="reason" required id="reject-reason-{slug}">'
        f'<button class="reject" type="submit" id="reject-{slug}">Reject</button></form>'
        f'<form method="post" action="{h(base)}/edit">{csrf_field(csrf)}'
        f'<textarea name="content" id="edit-content-{slug}">{h(content)}</textarea>'
        f'<input type="text" name="reason" placeholder="reason" required id="edit-reason-{slug}">'
        f'<button class="edit" type="submit" id="edit-{slug}">Save edit</button></form>'
        "</div>"
    )


def search(
    namespace: str, query: str, hits: Sequence[t.Hit] | None, csrf: str, error: str = ""
) -> str:
    form = (
        '<form method="get" action="/search" id="search-form">'
        f'<input type="text" name="ns" value="{h(namespace)}" placeholder="user/alice" id="ns"> '
        f'<input type="text" name="q" value="{h(query)}" placeholder="what to recall" id="q"> '
        '<button type="submit" id="search">Recall</button></form>'
    )
    body = form
    if hits is not None:
        rows = "".join(
            f'<tr><td><a href="/memory/{h(quote(x.id, safe=""))}">{h(x.id)}</a></td>'
            f"<td>{x.score:.3f}</td><td>{h(x.layer)}</td><td>{h(x.type)}</td>"
            f'<td class="content">{h(x.content)}</td></tr>'
            for x in hits
        )
        body += (
            f"<h2>{len(hits)} hit(s)</h2><table id='hits'><tr><th>id</th><th>score</th>"
            f"<th>layer</th><th>type</th><th>content</th></tr>{rows}</table>"
        )
    return page("Search a namespace", body, csrf=csrf, error=error)


def _forget_form(m: t.Memory, csrf: str) -> str:
    """Forget needs a reason and a ticked confirmation (it cannot be undone)."""
    if m.status == "forgotten":
        return ""
    return (
        f'<form method="post" action="/memory/{h(quote(m.id, safe=""))}/forget" class="actions" '
        f'id="forget-form">{csrf_field(csrf)}'
        '<input type="text" name="reason" placeholder="reason" required id="forget-reason"> '
        '<label><input type="checkbox" name="confirm" value="yes" id="forget-confirm"> '
        "forget it for good: only a tombstone stays</label> "
        '<button class="reject" type="submit" id="forget">Forget</button></form>'
    )


def memory_history(
    versions: Sequence[t.Memory], audit: Iterable[t.AuditEntry], csrf: str, flash: str = ""
) -> str:
    """The current version in full, then every version as its difference from the one before
    (``diff.versions``), then the memory's audit trail."""
    if not versions:
        return page("History", "<p>No versions.</p>", csrf=csrf, flash=flash)
    body = (
        memory_card(versions[-1], f"current: version {versions[-1].version}")
        + _forget_form(versions[-1], csrf)
        + f'<h2>{len(versions)} version(s), oldest first</h2><div id="versions">'
        + diff.versions(versions)
        + "</div>"
        + _audit_table(audit)
    )
    return page(f"History of {versions[-1].id}", body, csrf=csrf, flash=flash)


def _audit_table(entries: Iterable[t.AuditEntry]) -> str:
    rows = "".join(
        f"<tr><td>{h(when(e.at))}</td><td>{h(e.agent_id)}</td><td>{h(e.action)}</td>"
        f"<td>{h(e.namespace)}</td><td>{h(e.target)}</td><td>{h(e.detail)}</td></tr>"
        for e in entries
    )
    return (
        "<h2>Audit</h2><table id='audit'><tr><th>at</th><th>agent</th><th>action</th>"
        f"<th>namespace</th><th>target</th><th>detail</th></tr>{rows}</table>"
    )


def audit(entries: Sequence[t.AuditEntry], namespace: str, csrf: str) -> str:
    form = (
        '<form method="get" action="/audit"><input type="text" name="ns" '
        f'value="{h(namespace)}" placeholder="namespace (empty: all)"> '
        '<button type="submit">Filter</button></form>'
    )
    return page("Audit log", form + _audit_table(entries), csrf=csrf)


def stats(
    s: t.Stats,
    breakers: Sequence[t.BreakerState],
    csrf: str,
    pending: Sequence[t.Proposal] = (),
    queued: int = 0,
) -> str:
    brows = "".join(
        f"<tr><td>{h(b.layer)}</td><td class='state-{h(b.state.split('_')[0])}'>{h(b.state)}</td>"
        f"<td>{b.trips}</td><td>{h(b.last_error)}</td></tr>"
        for b in breakers
    )
    lrows = "".join(
        f"<tr><td>{h(x.layer)}</td><td>{x.latency_p50_ms:.2f}</td><td>{x.latency_p99_ms:.2f}</td>"
        f"<td>{x.calls}</td><td>{x.failures}</td></tr>"
        for x in s.layers
    )
    rrows = "".join(
        f"<tr><td>{h(r.layer)}</td><td>{r.recalls}</td><td>{r.hits}</td>"
        f"<td>{r.hit_rate:.1%}</td></tr>"
        for r in s.recall
    )
    mrows = "".join(f"<tr><td>{h(k)}</td><td>{v}</td></tr>" for k, v in sorted(s.memories.items()))
    oldest = min((p.created_at for p in pending if p.created_at), default=None)
    age = when(oldest) if oldest else "-"
    body = (
        "<table id='review-backlog'><tr><th>pending proposals</th><th>oldest since</th>"
        "<th>quarantine queue</th></tr>"
        f"<tr><td id='pending-count'>{len(pending)}</td><td id='oldest-pending'>{h(age)}</td>"
        f"<td id='queued-count'>{queued}</td></tr></table><h2>Journal</h2>"
        "<table id='backlog'><tr><th>journal backlog</th><th>apply lag</th><th>applied</th>"
        "<th>vectors</th><th>embedder</th></tr>"
        f"<tr><td id='journal-pending'>{s.journal_pending}</td>"
        f"<td id='apply-lag'>{s.apply_lag_seconds:.1f} s</td><td>{s.journal_applied}</td>"
        f"<td>{s.vectors}</td><td>{h(s.embedder)}</td></tr></table>"
        "<h2>Circuit breakers</h2><table id='breakers'><tr><th>store</th><th>state</th>"
        f"<th>trips</th><th>last error</th></tr>{brows}</table>"
        "<h2>Store latency</h2><table><tr><th>store</th><th>p50 ms</th><th>p99 ms</th>"
        f"<th>calls</th><th>failures</th></tr>{lrows}</table>"
        "<h2>Recall hit rate</h2><table><tr><th>layer</th><th>recalls</th><th>hits</th>"
        f"<th>hit rate</th></tr>{rrows}</table>"
        f"<h2>Memories</h2><table><tr><th>layer/status</th><th>count</th></tr>{mrows}</table>"
    )
    return page("Stats", body, csrf=csrf)
