"""The review console's HTTP server: a client of the gateway over gRPC, bound to loopback by
default. Log in with the master's API key; the console then calls the gateway as the master.

Sessions are random tokens in an HttpOnly, SameSite=Strict cookie; every POST carries the
session's CSRF token (the login form a token of its own), compared in constant time. Pages are
rendered on the server (``pages.py``) with everything escaped, and a Content-Security-Policy that
allows no script at all.
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
from urllib.parse import parse_qs, unquote, urlsplit

from gateway.client import GatewayClient, GatewayError
from gateway.client import types as t
from gateway.console import pages
from gateway.rpc.auth import FailureLimiter

log = logging.getLogger("memgate.console")

SESSION_COOKIE = "memgate_session"
LOGIN_COOKIE = "memgate_login"
SESSION_IDLE_S = 8 * 3600
MAX_FORM_BYTES = 64 * 1024
COMPETING = 3  # competing memories shown beside a proposal
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
        """A new session token when ``api_key`` makes the gateway answer a master-only call."""
        client = GatewayClient(
            self.target,
            self.agent,
            api_key=api_key or None,
            timeout=self.timeout,
            retries=1,
            **self.tls,
        )
        try:
            client.proposals("pending", 1)
        except GatewayError:
            client.close()
            return None
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


# ---- actions (each a few gateway calls as the master)
def competing(client: GatewayClient, p: t.Proposal) -> list[t.Memory]:
    """Memories of the proposal's namespace that the proposal would compete with: the fact it
    contradicts (same slot, another value), else its nearest neighbours."""
    item = p.item
    if p.conflicts_with is not None:
        return [p.conflicts_with]
    if not item.layer or item.layer == "working":
        return []
    try:
        hits = client.recall(item.content, [item.namespace], COMPETING, [item.layer])
        return [client.get(x.id) for x in hits]
    except GatewayError:
        return []


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

    def _form(self) -> dict[str, str] | None:
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_FORM_BYTES:
            return None
        raw = self.rfile.read(length).decode("utf-8", "replace")
        return {k: v[0] for k, v in parse_qs(raw, keep_blank_values=True).items()}

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
            "/search": self._search,
            "/audit": self._audit,
            "/stats": self._stats,
        }
        try:
            if url.path in route:
                self._send(200, route[url.path](session, query))
            elif url.path.startswith("/memory/"):
                self._send(200, self._memory(session, unquote(url.path[len("/memory/") :])))
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

    def _review(self, s: Session, _: dict[str, str]) -> str:
        queue = s.client.review_queue(100)
        pending = s.client.proposals("pending", 100)
        flash, s.flash = s.flash, ""
        return pages.review(queue, [(p, competing(s.client, p)) for p in pending], s.csrf, flash)

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

    def _stats(self, s: Session, _: dict[str, str]) -> str:
        return pages.stats(s.client.stats(), s.client.breakers(), s.csrf)

    def _memory(self, s: Session, mid: str) -> str:
        versions = s.client.history(mid)
        ns = versions[-1].namespace if versions else ""
        entries = [e for e in s.client.audit(namespace=ns, limit=500) if e.target == mid]
        return pages.memory_history(versions, entries, s.csrf)

    # ---- POST
    def do_POST(self) -> None:  # noqa: N802
        if self._host_refused():
            return
        path = urlsplit(self.path).path
        form = self._form()
        if form is None:
            self._send(413, "form too large", "text/plain")
            return
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
        parts = path.strip("/").split("/")
        deciders = {"proposals": decide_proposal, "review": decide_review}
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
        self._redirect("/review")

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
        token = console.login(form.get("api_key", ""))
        if token is None:
            console.failures.failed(address)
            self._login_page("The gateway did not accept this key for the master.", 401)
            return
        cookie = f"{SESSION_COOKIE}={token}; {self._cookie_flags()}; Path=/"
        self._redirect("/review", cookie)


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
