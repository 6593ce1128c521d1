"""The operators' commands of ``memgate``: proposals, pending facts, namespaces, forget, export
and import, the console.

Every command talks to a running gateway as a client (``--target``, ``--agent``, ``--api-key``
or ``MEMGATE_API_KEY``, and TLS, from the shared options in ``gateway/client_options.py``), prints rich tables for
people or, with ``--json``, one JSON document for scripts, and exits with a code scripts can test:

    0 ok · 1 gateway unreachable or overloaded · 2 bad input (usage, file, INVALID_ARGUMENT) ·
    3 not found · 4 not allowed (PERMISSION_DENIED, UNAUTHENTICATED) ·
    5 conflict (already decided, fact taken by another memory) · 6 any other gateway error
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, is_dataclass
from datetime import UTC, datetime
from typing import IO, Any

import grpc
from google.protobuf import json_format
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from gateway.client import GatewayError, wire
from gateway.client import types as t

OK, UNREACHABLE, BAD_INPUT, NOT_FOUND, NOT_ALLOWED, CONFLICT, FAILED = range(7)
#: the width of a table printed into a pipe or a file
PIPED_WIDTH = 240
EXPORT_FORMAT = 1
#: namespaces per Export call (the RPC's limit), and the most ``export --all`` lists
EXPORT_NAMESPACES = 100
MAX_NAMESPACES = 10_000
#: an Import call carries at most this many memories, and about this many bytes
IMPORT_BATCH = 100
IMPORT_BYTES = 4 * 1024 * 1024

_EXIT_BY_CODE = {
    grpc.StatusCode.UNAVAILABLE: UNREACHABLE,
    grpc.StatusCode.DEADLINE_EXCEEDED: UNREACHABLE,
    grpc.StatusCode.RESOURCE_EXHAUSTED: UNREACHABLE,
    grpc.StatusCode.INVALID_ARGUMENT: BAD_INPUT,
    grpc.StatusCode.NOT_FOUND: NOT_FOUND,
    grpc.StatusCode.PERMISSION_DENIED: NOT_ALLOWED,
    grpc.StatusCode.UNAUTHENTICATED: NOT_ALLOWED,
    grpc.StatusCode.FAILED_PRECONDITION: CONFLICT,
    grpc.StatusCode.ABORTED: CONFLICT,
    grpc.StatusCode.ALREADY_EXISTS: CONFLICT,
}

Command = Callable[[argparse.Namespace], int]


class BadInput(Exception):
    """A problem with what the user gave (a file, a line): exit 2."""


def exit_code(err: GatewayError) -> int:
    return _EXIT_BY_CODE.get(err.code, FAILED)


def _guarded(fn: Command) -> Command:
    """Turns errors into one line on stderr and the exit code that names them."""

    @functools.wraps(fn)
    def run(args: argparse.Namespace) -> int:
        try:
            return fn(args)
        except GatewayError as err:
            hint = ""
            if exit_code(err) == UNREACHABLE:
                hint = f" (is `memgate serve` running at {args.target}?)"
            elif exit_code(err) == NOT_ALLOWED:
                hint = " (these commands need the master: --agent, --api-key or MEMGATE_API_KEY)"
            print(f"memgate {args.command}: {err.code.name}: {err}{hint}", file=sys.stderr)
            return exit_code(err)
        except (BadInput, OSError) as err:
            print(f"memgate {args.command}: {err}", file=sys.stderr)
            return BAD_INPUT

    return run


def _plain(value: Any) -> Any:
    """Client types as JSON-able values (datetimes as ISO 8601)."""
    if is_dataclass(value) and not isinstance(value, type):
        return _plain(asdict(value))
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def _emit(args: argparse.Namespace, data: Any, table: Callable[[], Table | str]) -> None:
    if args.json:
        print(json.dumps(_plain(data), ensure_ascii=False, indent=2))
    else:
        # piped (| less, > file): wide rows rather than wrapping at 80 columns
        width = None if sys.stdout.isatty() else PIPED_WIDTH
        Console(soft_wrap=False, width=width).print(table())


def _stderr() -> Console:
    return Console(stderr=True)


# ---- proposals
def _proposal_table(rows: Sequence[t.Proposal]) -> Table:
    table = Table(title=f"{len(rows)} proposal(s)")
    cols = ("id", "state", "proposer", "namespace", "layer", "content", "conflicts with", "reason")
    for col in cols:
        table.add_column(col, overflow="fold")
    for p in rows:
        rival = p.conflicts_with
        conflict = (
            f"{p.slot}: {rival.content} ({rival.id}); approving supersedes it" if rival else ""
        )
        table.add_row(
            p.id,
            p.state,
            p.proposer,
            p.item.namespace,
            p.item.layer,
            p.item.content,
            conflict,
            p.reason,
        )
    return table


def _answer(
    args: argparse.Namespace, call: Callable[[Any], Any], view: Callable[[Any], Any]
) -> int:
    """One gateway call, its answer printed: ``view`` of it for people, JSON with ``--json``."""
    with args.connect(args) as client:
        got = call(client)
    _emit(args, got, lambda: view(got))
    return OK


@_guarded
def proposals_list(args: argparse.Namespace) -> int:
    return _answer(args, lambda c: c.proposals(args.state, args.limit), _proposal_table)


@_guarded
def proposals_decide(args: argparse.Namespace) -> int:
    def decide(c: Any) -> Any:
        return (c.approve if args.decision == "approve" else c.reject)(args.id, args.reason)

    return _answer(args, decide, lambda p: _proposal_table([p]))


# ---- pending facts
def _pending_table(rows: Sequence[t.PendingFact]) -> Table:
    table = Table(title=f"{len(rows)} pending fact(s)")
    for col in ("id", "namespace", "fact", "sessions", "confidence", "evidence"):
        table.add_column(col, overflow="fold")
    for f in rows:
        table.add_row(
            f.id, f.namespace, f.fact, ", ".join(f.sessions), f"{f.confidence:.2f}",
            " | ".join(f.evidence),
        )  # fmt: skip
    return table


@_guarded
def facts_list(args: argparse.Namespace) -> int:
    return _answer(args, lambda c: c.pending_facts(args.namespace, args.limit), _pending_table)


@_guarded
def facts_confirm(args: argparse.Namespace) -> int:
    def shown(got: t.FactResult) -> str:
        return f"promoted {args.id} to memory {got.memory_id}"

    return _answer(args, lambda c: c.confirm_fact(args.id), shown)


# ---- forget
@_guarded
def forget(args: argparse.Namespace) -> int:
    def shown(mem: t.Memory) -> str:
        return f"forgot {mem.id} in {mem.namespace} (version {mem.version})"

    return _answer(args, lambda c: c.forget(args.id, args.reason), shown)


# ---- export / import
def _progress(quiet: bool) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=_stderr(),
        disable=quiet,
        transient=False,
    )


# ---- namespaces
@_guarded
def namespaces(args: argparse.Namespace) -> int:
    with args.connect(args) as client:
        found = client.namespaces(args.prefix, args.limit)

    def table() -> Table:
        out = Table("namespace", title=f"{len(found.namespaces)} namespace(s)")
        for name in found.namespaces:
            out.add_row(name)
        return out

    _emit(args, found, table)
    if found.truncated and not args.json:
        _stderr().print(f"more than {len(found.namespaces)}: raise --limit or give --prefix")
    return OK


def _all_namespaces(client: Any) -> list[str]:
    found = client.namespaces("", MAX_NAMESPACES)
    if found.truncated:
        raise BadInput(f"more than {MAX_NAMESPACES} namespaces: export them by prefix")
    return list(found.namespaces)


@_guarded
def export(args: argparse.Namespace) -> int:
    if bool(args.all) == bool(args.namespaces):
        raise BadInput("name the namespaces to export, or pass --all (not both)")
    out: IO[str] = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout  # noqa: SIM115
    counts = {"memories": 0, "versions": 0, "links": 0}
    try:
        with args.connect(args) as client, _progress(args.quiet) as progress:
            if args.all:
                args.namespaces = _all_namespaces(client)
            header = {
                "memgate_export": EXPORT_FORMAT,
                "namespaces": args.namespaces,
                "exported_at": datetime.now(UTC).isoformat(),
                "vectors": args.vectors,
            }
            out.write(json.dumps(header) + "\n")
            task = progress.add_task("exporting", total=None)
            # the Export RPC takes at most 100 namespaces a call
            for start in range(0, len(args.namespaces), EXPORT_NAMESPACES):
                chunk = args.namespaces[start : start + EXPORT_NAMESPACES]
                for item in client.export(chunk, include_vectors=args.vectors):
                    out.write(wire.exported_to_json(item) + "\n")
                    counts["memories"] += 1
                    counts["versions"] += len(item.versions)
                    counts["links"] += len(item.links)
                    progress.advance(task)
    finally:
        if out is not sys.stdout:
            out.close()
        else:
            out.flush()
    summary = {"namespaces": args.namespaces, **counts, "file": args.output or "-"}
    if args.json:
        print(json.dumps(summary), file=sys.stderr if not args.output else sys.stdout)
    elif not args.quiet:
        _stderr().print(
            f"exported {counts['memories']} memories ({counts['versions']} versions, "
            f"{counts['links']} links) of {', '.join(args.namespaces)}"
        )
    return OK


def _read_export(path: str) -> Iterator[t.ExportedMemory]:
    handle: IO[str] = sys.stdin if path == "-" else open(path, encoding="utf-8")  # noqa: SIM115
    try:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            if line.lstrip().startswith('{"memgate_export"'):
                header = json.loads(line)
                if header.get("memgate_export") != EXPORT_FORMAT:
                    raise BadInput(f"{path}:{number}: export format {header!r} is not supported")
                continue
            try:
                yield wire.exported_from_json(line)
            except json_format.ParseError as err:
                raise BadInput(f"{path}:{number}: not an exported memory ({err})") from None
    finally:
        if handle is not sys.stdin:
            handle.close()


def _batches(items: Iterator[t.ExportedMemory]) -> Iterator[list[t.ExportedMemory]]:
    batch: list[t.ExportedMemory] = []
    size = 0
    for item in items:
        weight = wire.exported_to_pb(item).ByteSize()
        if batch and (len(batch) >= IMPORT_BATCH or size + weight > IMPORT_BYTES):
            yield batch
            batch, size = [], 0
        batch.append(item)
        size += weight
    if batch:
        yield batch


@_guarded
def import_(args: argparse.Namespace) -> int:
    total = t.ImportResult(0, 0, 0, 0, [])
    lines = None
    if args.file != "-":
        with open(args.file, encoding="utf-8") as f:
            lines = sum(1 for line in f if line.strip() and '"memgate_export"' not in line[:20])
    with args.connect(args) as client, _progress(args.quiet) as progress:
        task = progress.add_task("importing", total=lines)
        for batch in _batches(_read_export(args.file)):
            r = client.import_memories(batch, wait=True)
            total = t.ImportResult(
                total.imported + r.imported,
                total.unchanged + r.unchanged,
                total.reembedded + r.reembedded,
                total.links + r.links,
                total.conflicts + r.conflicts,
                total.erased + r.erased,
            )
            progress.advance(task, len(batch))

    def table() -> Table:
        out = Table(title=f"import of {args.file}")
        for col in ("imported", "unchanged", "re-embedded", "links", "conflicts", "erased"):
            out.add_column(col, justify="right")
        out.add_row(
            *(str(x) for x in (total.imported, total.unchanged, total.reembedded, total.links)),
            str(len(total.conflicts)),
            str(len(total.erased)),
        )
        return out

    _emit(args, total, table)
    if total.erased:
        print(
            f"memgate import: {len(total.erased)} memories not imported: erased since they were "
            f"exported (ForgetNamespace/ForgetSubject; {', '.join(total.erased[:5])}…)",
            file=sys.stderr,
        )
    if total.conflicts:
        print(
            f"memgate import: {len(total.conflicts)} memories not imported: another active "
            f"memory holds their fact ({', '.join(total.conflicts[:5])}…)",
            file=sys.stderr,
        )
        return CONFLICT
    return OK


# ---- console
def console(args: argparse.Namespace) -> int:
    from gateway.console.server import run_console

    return run_console(args)


def register(
    sub: argparse._SubParsersAction,  # type: ignore[type-arg]
    client_options: Callable[[argparse.ArgumentParser], None],
) -> None:
    """Adds the operators' commands to ``memgate``'s subcommands."""
    proposals = sub.add_parser("proposals", help="list, approve or reject proposals (master)")
    psub = proposals.add_subparsers(dest="action", required=True)
    plist = psub.add_parser("list", help="proposals to shared namespaces")
    plist.add_argument(
        "--state", default="pending", choices=["pending", "approved", "rejected", ""]
    )
    plist.add_argument("--limit", type=int, default=100)
    client_options(plist)
    plist.set_defaults(func=proposals_list)
    for decision in ("approve", "reject"):
        p = psub.add_parser(decision, help=f"{decision} a pending proposal")
        p.add_argument("id")
        # one rule with the console: every decision says why (it goes to the audit log)
        p.add_argument("--reason", required=True, help="why (recorded in the audit log)")
        client_options(p)
        p.set_defaults(func=proposals_decide, decision=decision)

    facts = sub.add_parser("facts", help="facts waiting for a second session (master)")
    fsub = facts.add_subparsers(dest="action", required=True)
    flist = fsub.add_parser("list", help="a namespace's pending facts, oldest first")
    flist.add_argument("namespace", help='e.g. "user/alice"')
    flist.add_argument("--limit", type=int, default=100, help="at most this many (up to 500)")
    client_options(flist)
    flist.set_defaults(func=facts_list)
    fconfirm = fsub.add_parser("confirm", help="promote a pending fact to a memory now")
    fconfirm.add_argument("id", help="a pending fact's id (from `memgate facts list`)")
    client_options(fconfirm)
    fconfirm.set_defaults(func=facts_confirm)

    f = sub.add_parser("forget", help="forget a memory at once (audited)")
    f.add_argument("id")
    f.add_argument("--reason", required=True)
    client_options(f)
    f.set_defaults(func=forget)

    n = sub.add_parser("namespaces", help="the namespaces holding memories (that you may read)")
    n.add_argument("--prefix", default="", help='only names starting with it, e.g. "user/"')
    n.add_argument("--limit", type=int, default=1000, help="at most this many (up to 10,000)")
    client_options(n)
    n.set_defaults(func=namespaces)

    e = sub.add_parser("export", help="write namespaces as JSON lines (master)")
    e.add_argument("namespaces", nargs="*", metavar="NAMESPACE")
    e.add_argument(
        "--all",
        action="store_true",
        help="every namespace holding an active memory (ListNamespaces)",
    )
    e.add_argument("-o", "--output", help="file to write (default: standard output)")
    e.add_argument("--vectors", action="store_true", help="carry the embeddings too")
    e.add_argument("--quiet", action="store_true", help="no progress on stderr")
    client_options(e)
    e.set_defaults(func=export)

    i = sub.add_parser("import", help="import a file written by `memgate export` (master)")
    i.add_argument("file", help="JSON lines file, or - for standard input")
    i.add_argument("--quiet", action="store_true", help="no progress on stderr")
    client_options(i)
    i.set_defaults(func=import_)

    c = sub.add_parser("console", help="the review console in the browser (master)")
    c.add_argument("--listen", default="127.0.0.1:8470", help="HOST:PORT to serve the console on")
    client_options(c)
    c.set_defaults(func=console)
