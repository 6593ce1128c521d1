"""The review console's HTTP server: a client of the gateway over gRPC, bound to loopback by
default. Log in with the master's API key; the console then calls the gateway as the master.

Sessions are random tokens in an HttpOnly, SameSite=Strict cookie; every POST carries the
session's CSRF token (the login form a token of its own), compared in constant time. Pages are
rendered on the server (``pages.py``, ``review_pages.py``, ``overview_pages.py``) with everything
escaped, and a Content-Security-Policy that allows no script at all. What a POST does is in
``actions.py``. The console is made with the client's ``via="console"``: the gateway audits its
recalls and reads as ``console_recall``/``console_read``, never as the master agent's own.
"""

from __future__ import annotations

import argparse
import hmac
import http.server
import logging
import secrets
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlencode, urlsplit

from gateway.client import GatewayClient, GatewayError, PermissionDenied, Unauthenticated
from gateway.console import actions, overview_pages, pages
from gateway.console import queue_view as qv
from gateway.console import review_pages as rp
from gateway.rpc.auth import FailureLimiter

log = logging.getLogger("memgate.console")

SESSION_COOKIE = "memgate_session"
LOGIN_COOKIE = "memgate_login"
SESSION_IDLE_S = 8 * 3600
MAX_FORM_BYTES = 64 * 1024
LISTED = 500  # pending proposals / queued memories the console fetches (the gateway's cap)
#: wrong keys per browser address within ``LOGIN_WINDOW_S`` before it gets 429 (issue 33 L3)
LOGIN_FAILURES = 10
LOGIN_WINDOW_S = 60.0
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


@dataclass
class Session:
    client: GatewayClient
    csrf: str
    last_seen: float = field(default_factory=time.monotonic)
    flash: str = ""


class Console:
    """What the console knows: the gateway it calls, the master's id, the live sessions."""

    def __init__(
        self, target: str, agent: str, timeout: float = 10.0, tls: dict[str, Any] | None = None
    ) -> None:
        self.target = target
        self.agent = agent
        self.timeout = timeout
        self.tls = {k: v for k, v in (tls or {}).items() if v is not None}
        self._sessions: dict[str, Session] = {}
        self._lock = threading.Lock()
        self.failures = FailureLimiter(LOGIN_FAILURES, LOGIN_WINDOW_S)

    def login(self, api_key: str) -> str | None:
        """A new session token when ``api_key`` makes the gateway answer a master-only call;
        None when the gateway refused the key; ``Unreachable`` when it could not be asked (down,
        or a TLS set-up that does not match: not the user's key, not a failed login)."""
        client = GatewayClient(
            self.target,
            self.agent,
            api_key=api_key or None,
            timeout=self.timeout,
            retries=1,
            via="console",
            **self.tls,
        )
        try:
            client.proposals("pending", 1)
        except (Unauthenticated, PermissionDenied):
            client.close()
            return None
        except GatewayError as exc:
            client.close()
            raise Unreachable(exc.message) from None
        token = secrets.token_urlsafe(32)
        with self._lock:
            self._sessions[token] = Session(client, secrets.token_urlsafe(32))
        return token

    def session(self, token: str) -> Session | None:
        with self._lock:
            found = self._sessions.get(token)
            if found is None:
                return None
            if time.monotonic() - found.last_seen > SESSION_IDLE_S:
                del self._sessions[token]
                found.client.close()
                return None
            found.last_seen = time.monotonic()
            return found

    def logout(self, token: str) -> None:
        with self._lock:
            found = self._sessions.pop(token, None)
        if found:
            found.client.close()

    def close(self) -> None:
        with self._lock:
            sessions, self._sessions = list(self._sessions.values()), {}
        for s in sessions:
            s.client.close()


class Handler(http.server.BaseHTTPRequestHandler):
    server: ConsoleServer
    server_version = "memgate-console"
    sys_version = ""

    # ---- plumbing
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        log.info("%s %s", self.address_string(), format % args)

    def _send(
        self,
        status: int,
        body: str | bytes,
        ctype: str = "text/html; charset=utf-8",
        **headers: str,
    ) -> None:
        data = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in {**SECURITY_HEADERS, **headers}.items():
            self.send_header(k.replace("_", "-"), v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _redirect(self, where: str, cookie: str = "") -> None:
        # a path of this console only, every character outside a URL's quoted: a CR/LF from a
        # form field can never start a header of its own
        local = where.startswith("/") and not where.startswith("//")
        where = quote(where, safe="/?=&%#-_.~") if local else "/"
        self.send_response(HTTPStatus.SEE_OTHER)
        self.send_header("Location", where)
        if cookie:
            self.send_header("Set-Cookie", cookie)
        for k, v in SECURITY_HEADERS.items():
            self.send_header(k, v)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _cookie(self, name: str) -> str:
        jar = SimpleCookie(self.headers.get("Cookie", ""))
        return jar[name].value if name in jar else ""

    def _session(self) -> tuple[str, Session | None]:
        token = self._cookie(SESSION_COOKIE)
        return token, self.server.console.session(token) if token else None

    def _form(self) -> tuple[dict[str, str], list[str]] | None:
        """The form's fields (first value of each) and every ``id`` it sent (bulk forms)."""
        # a length that is not a plain non-negative number (``-1`` made ``read`` stream to the
        # end, past the cap) is refused like one over the cap
        text = (self.headers.get("Content-Length") or "0").strip()
        if not text.isdigit() or int(text) > MAX_FORM_BYTES:
            return None
        length = int(text)
        raw = parse_qs(self.rfile.read(length).decode("utf-8", "replace"), keep_blank_values=True)
        return {k: v[0] for k, v in raw.items()}, raw.get("id", [])

    # ---- GET
    def _host_refused(self) -> bool:
        """A console on loopback answers only requests addressed to loopback (``Host``
        localhost, 127.0.0.1, [::1]): a page of another site that re-points its own name at
        127.0.0.1 (DNS rebinding) is refused (issue 33 L3). Bound elsewhere (behind a proxy),
        the proxy decides which names reach it."""
        if str(self.server.server_address[0]) not in LOOPBACK:
            return False
        host = (self.headers.get("Host") or "").strip().lower()
        name = host[1:].split("]", 1)[0] if host.startswith("[") else host.rsplit(":", 1)[0]
        if name in LOOPBACK:
            return False
        self._send(421, "this console answers requests to localhost only", "text/plain")
        return True

    def do_GET(self) -> None:  # noqa: N802
        if self._host_refused():
            return
        url = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        if url.path == "/static/console.css":
            self._send(200, pages.CSS, "text/css; charset=utf-8")
            return
        if url.path == "/login":
            self._login_page()
            return
        if url.path == "/favicon.ico":
            self._send(404, b"", "text/plain")
            return
        token, session = self._session()
        if session is None:
            self._redirect("/login")
            return
        route: dict[str, Callable[[Session, dict[str, str]], str]] = {
            "/": self._review,
            "/review": self._review,
            "/queue": self._queue,
            "/namespaces": self._namespaces,
            "/search": self._search,
            "/audit": self._audit,
            "/stats": self._stats,
            "/facts": self._facts,
        }
        by_id: dict[str, Callable[[Session, str], str | None]] = {
            "/memory/": self._memory,
            "/proposal/": self._proposal,
            "/queue/": self._queued,
        }
        try:
            prefix = next((p for p in by_id if url.path.startswith(p)), "")
            if url.path in route:
                self._send(200, route[url.path](session, query))
            elif prefix and (found := by_id[prefix](session, unquote(url.path[len(prefix) :]))):
                self._send(200, found)
            else:
                self._send(404, pages.page("Not found", "<p>No such page.</p>", csrf=session.csrf))
        except GatewayError as err:
            body = pages.page(
                "Gateway error", "", csrf=session.csrf, error=f"{err.code.name}: {err}"
            )
            self._send(502, body)

    def _cookie_flags(self) -> str:
        """HttpOnly, SameSite=Strict, and Secure when the browser reached the console over HTTPS
        (a TLS proxy's ``X-Forwarded-Proto: https``) or the console talks TLS to the gateway
        (browsers accept Secure cookies from http://localhost)."""
        proto = (self.headers.get("X-Forwarded-Proto") or "").strip().lower()
        secure = proto == "https" or bool(self.server.console.tls)
        return "HttpOnly; SameSite=Strict" + ("; Secure" if secure else "")

    def _login_page(self, error: str = "", status: int = 200) -> None:
        # one token per browser: a second login page (another tab, a favicon fetch that was sent
        # to the login page) must not invalidate the form already shown
        csrf = self._cookie(LOGIN_COOKIE) or secrets.token_urlsafe(24)
        cookie = f"{LOGIN_COOKIE}={csrf}; {self._cookie_flags()}; Path=/login"
        c = self.server.console
        self._send(status, pages.login(csrf, c.target, c.agent, error), Set_Cookie=cookie)

    # Browsing reads only the master's listings (ListProposals, ListReview, History,
    # QueryAudit): none of them is a recall or a read of the master's in the audit log. The one
    # recall a reviewer makes on purpose (Search) is audited as "console_recall".
    def _review(self, s: Session, q: dict[str, str]) -> str:
        pending = s.client.proposals("pending", LISTED)
        queued = len(s.client.review_queue(LISTED))
        flash, s.flash = s.flash, ""
        truncated = len(pending) >= LISTED
        return rp.proposal_list(pending, qv.Filters.of(q), queued, s.csrf, flash, truncated)

    def _namespaces(self, s: Session, _: dict[str, str]) -> str:
        pending = s.client.proposals("pending", LISTED)
        flash, s.flash = s.flash, ""
        names = s.client.namespaces("", 10_000)
        return overview_pages.overview(names, pending, s.csrf, flash=flash)

    def _queue(self, s: Session, _: dict[str, str]) -> str:
        flash, s.flash = s.flash, ""
        return rp.queue_list(s.client.review_queue(LISTED), s.csrf, flash)

    def _proposal(self, s: Session, pid: str) -> str | None:
        pending = s.client.proposals("pending", LISTED)
        found = next((p for p in pending if p.id == pid), None)
        if found is None:
            return None
        twins = next(g.members for g in qv.group(pending) if pid in g.ids)
        return rp.proposal_detail(found, twins, s.csrf)

    def _queued(self, s: Session, mid: str) -> str | None:
        found = next((m for m in s.client.review_queue(LISTED) if m.id == mid), None)
        return rp.queued_detail(found, s.csrf) if found else None

    def _search(self, s: Session, q: dict[str, str]) -> str:
        ns, text = q.get("ns", "").strip(), q.get("q", "").strip()
        if not (ns and text):
            return pages.search(ns, text, None, s.csrf)
        try:
            hits = list(s.client.recall(text, [ns], 20))
        except GatewayError as err:
            return pages.search(ns, text, None, s.csrf, error=f"{err.code.name}: {err}")
        return pages.search(ns, text, hits, s.csrf)

    def _audit(self, s: Session, q: dict[str, str]) -> str:
        ns = q.get("ns", "").strip()
        return pages.audit(s.client.audit(namespace=ns, limit=200), ns, s.csrf)

    def _facts(self, s: Session, q: dict[str, str]) -> str:
        ns = q.get("ns", "").strip()
        flash, s.flash = s.flash, ""
        try:
            rows = s.client.pending_facts(ns, LISTED) if ns else []
        except GatewayError as err:
            return overview_pages.pending_facts(ns, [], s.csrf, error=f"{err.code.name}: {err}")
        return overview_pages.pending_facts(ns, rows, s.csrf, flash=flash)

    def _stats(self, s: Session, _: dict[str, str]) -> str:
        pending = s.client.proposals("pending", LISTED)
        queued = len(s.client.review_queue(LISTED))
        return pages.stats(s.client.stats(), s.client.breakers(), s.csrf, pending, queued)

    def _memory(self, s: Session, mid: str) -> str:
        versions = s.client.history(mid)
        ns = versions[-1].namespace if versions else ""
        # a forget's entry names the memory in its detail ("<id>: <reason>")
        entries = [
            e
            for e in s.client.audit(namespace=ns, limit=500)
            if e.target == mid or e.detail.startswith(f"{mid}:")
        ]
        flash, s.flash = s.flash, ""
        return pages.memory_history(versions, entries, s.csrf, flash)

    # ---- POST
    def do_POST(self) -> None:  # noqa: N802
        if self._host_refused():
            return
        path = urlsplit(self.path).path
        parsed = self._form()
        if parsed is None:
            self._send(413, "form too large", "text/plain")
            return
        form, ids = parsed
        if path == "/login":
            self._login(form)
            return
        token, session = self._session()
        if session is None:
            self._redirect("/login")
            return
        if not hmac.compare_digest(form.get("csrf", ""), session.csrf):
            self._send(403, "missing or wrong CSRF token: reload the page", "text/plain")
            return
        if path == "/logout":
            self.server.console.logout(token)
            self._redirect("/login", f"{SESSION_COOKIE}=; Max-Age=0; Path=/")
            return
        self._act(session, path, form, ids)

    def _act(self, session: Session, path: str, form: dict[str, str], ids: list[str]) -> None:
        """A signed-in reviewer's action (the CSRF token checked): erase, forget, bulk or one
        decision."""
        parts = path.strip("/").split("/")
        if parts == ["namespaces", "erase"]:
            session.flash = actions.erase_namespace(session.client, form)
            self._redirect("/namespaces")
            return
        if len(parts) == 3 and parts[0] == "memory" and parts[2] == "forget":
            mid = unquote(parts[1])
            session.flash = actions.forget(session.client, mid, form)
            self._redirect(f"/memory/{quote(mid, safe='')}")
            return
        if len(parts) == 3 and parts[0] == "facts" and parts[2] == "confirm":
            pid = unquote(parts[1])
            try:
                session.flash = actions.confirm_fact(session.client, pid)
            except GatewayError as err:
                session.flash = f"Could not confirm {pid}: {err}"
            self._redirect("/facts?" + urlencode({"ns": form.get("ns", "")}))
            return
        if len(parts) == 2 and parts[0] in ("proposals", "review") and parts[1] == "bulk":
            self._bulk(session, parts[0], form, ids)
            return
        deciders = {"proposals": actions.decide_proposal, "review": actions.decide_review}
        if (
            len(parts) != 3
            or parts[0] not in deciders
            or parts[2] not in ("approve", "reject", "edit")
        ):
            self._send(404, "no such action", "text/plain")
            return
        kind, key, action = parts[0], unquote(parts[1]), parts[2]
        if not form.get("reason", "").strip():
            session.flash = "Give a reason: it goes to the audit log."
        else:
            try:
                session.flash = deciders[kind](session.client, key, action, form)
            except (GatewayError, LookupError) as err:
                session.flash = f"Could not {action} {key}: {err}"
        self._redirect("/review" if kind == "proposals" else "/queue")

    def _bulk(self, session: Session, kind: str, form: dict[str, str], ids: list[str]) -> None:
        back = form.get("back", "")
        if not back.startswith(("/review", "/queue")):
            back = "/review" if kind == "proposals" else "/queue"
        action, reason = form.get("action", ""), form.get("reason", "").strip()
        try:
            keys = actions.bulk_ids(ids)
        except ValueError as err:
            self._send(400, f"bad bulk form: {err}", "text/plain")
            return
        if action not in ("approve", "reject"):
            self._send(400, "bad bulk form: action must be approve or reject", "text/plain")
            return
        if not keys:
            session.flash = "Select at least one row."
        elif not reason:
            session.flash = "Give a reason: it goes to the audit log with each item."
        else:
            session.flash = actions.decide_many(
                session.client, kind, keys, action == "approve", reason
            )
        self._redirect(back)

    def _login(self, form: dict[str, str]) -> None:
        expected = self._cookie(LOGIN_COOKIE)
        if not expected or not hmac.compare_digest(form.get("csrf", ""), expected):
            self._login_page("The login form expired: try again.", 403)
            return
        console, address = self.server.console, self.client_address[0]
        wait = console.failures.retry_after_s(address)
        if wait > 0:
            self._login_page(f"Too many failed logins: try again in {wait:.0f} s.", 429)
            return
        try:
            token = console.login(form.get("api_key", ""))
        except Unreachable as exc:  # not the key's fault, not a failed login
            self._login_page(
                f"The console cannot reach the gateway ({exc}): check that it runs and that "
                "the console's --tls-* options match its certificates.",
                502,
            )
            return
        if token is None:
            console.failures.failed(address)
            self._login_page("The gateway did not accept this key for the master.", 401)
            return
        cookie = f"{SESSION_COOKIE}={token}; {self._cookie_flags()}; Path=/"
        self._redirect("/review", cookie)


class Unreachable(Exception):
    """The gateway could not be asked at all (down, or TLS that does not match)."""


class ConsoleServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], console: Console) -> None:
        super().__init__(address, Handler)
        self.console = console

    def server_close(self) -> None:
        super().server_close()
        self.console.close()


def make_server(
    target: str, listen: str, agent: str = "master", tls: dict[str, Any] | None = None
) -> ConsoleServer:
    host, _, port = listen.rpartition(":")
    return ConsoleServer((host or "127.0.0.1", int(port)), Console(target, agent, tls=tls))


def run_console(args: argparse.Namespace) -> int:
    from gateway.client_options import tls_of

    try:
        tls = tls_of(args)
    except OSError as exc:
        print(f"memgate console: {exc}", file=sys.stderr)
        return 2
    try:
        server = make_server(args.target, args.listen, args.agent, tls)
    except (OSError, ValueError) as exc:
        print(f"memgate console: cannot listen on {args.listen}: {exc}", file=sys.stderr)
        return 2
    host, port = str(server.server_address[0]), int(server.server_address[1])
    if host not in ("127.0.0.1", "::1", "localhost"):
        print(
            f"memgate console: listening on {host}, not loopback: anyone who reaches it can try "
            "keys; put it behind TLS",
            file=sys.stderr,
        )
    print(f"memgate console: http://{host}:{port}/ (gateway {args.target})", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
