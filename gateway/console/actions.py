"""What the reviewer's POSTs do: each decision is one gateway call as the master, so the gateway
audits every proposal and every queued memory on its own, with the reviewer's reason — a bulk
decision too (one call per item, never one "bulk" entry)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from gateway.client import GatewayClient, GatewayError

MAX_BULK = 500  # items in one bulk decision (the most the console lists)
_ID = re.compile(r"^[A-Za-z0-9_.:@-]{1,128}$")


def bulk_ids(values: Sequence[str]) -> list[str]:
    """The ids a bulk form sent: each checkbox carries one id or a group's ids joined by ",".
    Raises ValueError on a malformed id or more than ``MAX_BULK``."""
    out: list[str] = []
    for value in values:
        for key in value.split(","):
            if not _ID.match(key):
                raise ValueError(f"not an id: {key[:40]!r}")
            if key not in out:
                out.append(key)
    if len(out) > MAX_BULK:
        raise ValueError(f"at most {MAX_BULK} items in one decision, got {len(out)}")
    return out


def confirm_fact(client: GatewayClient, pid: str) -> str:
    got = client.confirm_fact(pid)
    if not got.promoted:
        return f"Pending fact {pid} was not promoted (it may have been refused as it was written)."
    return f"Confirmed pending fact {pid}: memory {got.memory_id}."


def decide_proposal(client: GatewayClient, pid: str, action: str, form: dict[str, str]) -> str:
    reason = form.get("reason", "").strip()
    if action == "approve":
        client.approve(pid, reason)
        return f"Approved proposal {pid}."
    if action == "reject":
        client.reject(pid, reason)
        return f"Rejected proposal {pid}."
    proposal = next((p for p in client.proposals("pending", 500) if p.id == pid), None)
    if proposal is None:
        raise LookupError(f"proposal {pid} is not pending any more")
    i = proposal.item
    written = client.write(
        i.namespace,
        i.layer,
        form.get("content", ""),
        wait=True,
        type=i.type,
        importance=i.importance or None,
        confidence=i.confidence or None,
        session_id=i.session_id,
        task_id=i.task_id,
        metadata={**i.metadata, "edited_from_proposal": pid},
        evidence=i.evidence,
        entities=i.entities,
    )
    client.reject(pid, f"edited into {written}: {reason}")
    return f"Edited proposal {pid}: written by the master as {written}."


def decide_review(client: GatewayClient, mid: str, action: str, form: dict[str, str]) -> str:
    reason = form.get("reason", "").strip()
    if action in ("approve", "reject"):
        mem = client.resolve_review(mid, action == "approve", reason)
        return f"{action.capitalize()}d {mid}: now {mem.status}."
    old = client.get(mid)
    written = client.write(
        old.namespace,
        old.layer,
        form.get("content", ""),
        wait=True,
        type=old.type,
        importance=old.importance,
        confidence=old.confidence,
        session_id=old.source_session,
        task_id=old.task_id,
        metadata={**old.metadata, "edited_from": mid},
        evidence=old.evidence,
        entities=old.entities,
    )
    client.resolve_review(mid, False, f"replaced by the edit {written}: {reason}")
    return f"Edited {mid}: written by the master as {written}; the original is forgotten."


def decide_many(
    client: GatewayClient, kind: str, ids: Sequence[str], approve: bool, reason: str
) -> str:
    """Approve or reject each item with the same reason; one call (one audit entry) per item.
    Goes on past a failed item and says which failed."""
    one: Callable[[str], object]
    if kind == "proposals":
        one = (
            (lambda i: client.approve(i, reason))
            if approve
            else (lambda i: client.reject(i, reason))
        )
    else:
        one = lambda i: client.resolve_review(i, approve, reason)  # noqa: E731
    done, failed = 0, []
    for key in ids:
        try:
            one(key)
            done += 1
        except GatewayError as err:
            failed.append(f"{key} ({err.code.name})")
    verb = "Approved" if approve else "Rejected"
    what = "proposal(s)" if kind == "proposals" else "queued memory(ies)"
    note = f"{verb} {done} {what}, each audited with the reason."
    if failed:
        note += f" {len(failed)} failed: {', '.join(failed[:10])}"
    return note


def forget(client: GatewayClient, mid: str, form: dict[str, str]) -> str:
    """Forget one memory (audited with the reason) — only with a reason and the confirmation
    ticked; otherwise nothing happens and the reviewer is told why."""
    reason = form.get("reason", "").strip()
    if not reason:
        return "Give a reason: it goes to the audit log."
    if form.get("confirm") != "yes":
        return "Tick the confirmation to forget it: forgetting cannot be undone."
    if not _ID.match(mid):
        return "Not a memory id."
    try:
        client.forget(mid, reason)
    except GatewayError as err:
        return f"Could not forget {mid}: {err.code.name}: {err}"
    return f"Forgot {mid}: only a tombstone stays."


def erase_namespace(client: GatewayClient, form: dict[str, str]) -> str:
    """Erase a whole namespace (ForgetNamespace, audited) — only when its name was typed twice
    alike and a reason given; otherwise nothing happens and the reviewer is told why."""
    ns, again = form.get("namespace", "").strip(), form.get("confirm", "").strip()
    reason = form.get("reason", "").strip()
    if not ns or ns != again:
        return "Type the namespace twice, the same both times: erasing cannot be undone."
    if not reason:
        return "Give a reason: it goes to the audit log."
    try:
        done = client.forget_namespace(ns, reason, wait=True)
    except GatewayError as err:
        return f"Could not erase {ns}: {err.code.name}: {err}"
    state = "erased from every store" if done.applied else "erasure under way"
    return f"Erased {ns} ({state}; audit id {done.erase_id})."
