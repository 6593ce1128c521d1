"""The review console in a real headless Chromium (Debian's chromium + chromium-driver): log in
with the master's key, approve one proposal, reject another, watch them leave the queue and the
audit entries appear. Hostile memory text stays text. Screenshots go to test-artifacts/console/.

Without Chromium the browser test is skipped locally and fails in CI (CI=true):
scripts/test.sh installs it."""

from __future__ import annotations

import os
import shutil
import threading
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator
from http.cookiejar import CookieJar
from pathlib import Path
from typing import Any

import pytest

from gateway.client import GatewayClient
from gateway.console.server import ConsoleServer, make_server
from tests.e2e.conftest import RunningGateway, gateway_settings, running_gateway

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "console"
MASTER_KEY = "master-key-" + uuid.uuid4().hex
HELPER_KEY = "helper-key-" + uuid.uuid4().hex
HOSTILE = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2"> & "quotes"'


def _browser_paths() -> tuple[str, str] | None:
    chrome = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    return (chrome, driver) if chrome and driver else None


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningGateway]:
    settings = gateway_settings(
        tmp_path_factory.mktemp("console"),
        api_keys={"master": MASTER_KEY, "helper": HELPER_KEY},
    )
    with running_gateway(settings) as gw:
        yield gw


@pytest.fixture
def console(gateway: RunningGateway) -> Iterator[str]:
    server: ConsoleServer = make_server(gateway.address, "127.0.0.1:0")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def _propose(gateway: RunningGateway, *contents: str) -> tuple[str, list[str]]:
    """A helper agent proposes to a fresh shared namespace; returns it and the proposal ids."""
    ns = f"user/u-{uuid.uuid4().hex[:8]}"
    with GatewayClient(gateway.address, "helper", api_key=HELPER_KEY) as h:
        ids = [
            h.write_result(ns, "semantic", text, evidence=[f"said in session {i}"]).proposal_id
            for i, text in enumerate(contents)
        ]
    assert all(ids)
    return ns, ids


@pytest.fixture
def browser() -> Iterator[Any]:
    paths = _browser_paths()
    if paths is None:
        message = "chromium and chromium-driver are not installed (apt-get install chromium chromium-driver)"
        if os.environ.get("CI"):
            pytest.fail(message + " — CI must run the console test")
        pytest.skip(message)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = paths[0]
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--window-size=1400,1600",
    ):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(paths[1]), options=options)
    driver.set_page_load_timeout(30)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    try:
        yield driver
    finally:
        driver.quit()


def _shot(driver: Any, name: str) -> None:
    driver.save_screenshot(str(ARTIFACTS / f"{name}.png"))


def test_review_in_a_real_browser(browser: Any, console: str, gateway: RunningGateway) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    def text_of(element_id: str, containing: str) -> str:
        """Waits (a loaded machine may be slow) until the element shows ``containing``."""
        located = (By.ID, element_id)
        WebDriverWait(browser, 30).until(ec.text_to_be_present_in_element(located, containing))
        return str(browser.find_element(*located).text)

    ns, (keep, drop) = _propose(
        gateway, "The user's favourite editor is Helix", "The user hates " + HOSTILE
    )
    by_id = browser.find_element
    browser.get(console + "/review")
    assert browser.current_url.endswith("/login")
    by_id(By.ID, "api_key").send_keys("not-the-key")
    by_id(By.ID, "login").click()
    assert "did not accept" in text_of("error", "did not accept")
    by_id(By.ID, "api_key").send_keys(MASTER_KEY)
    by_id(By.ID, "login").click()
    WebDriverWait(browser, 30).until(ec.url_contains("/review"))
    _shot(browser, "1-review-queue")
    # both proposals, with their evidence; the hostile one shown as text, never run
    assert by_id(By.ID, f"proposal-{keep}").is_displayed()
    card = by_id(By.ID, f"proposal-{drop}").text
    assert "<script>window.__pwned = 1</script>" in card and "said in session 1" in card
    assert browser.execute_script("return window.__pwned === undefined")

    by_id(By.ID, f"approve-reason-{keep}").send_keys("confirmed by the user")
    by_id(By.ID, f"approve-{keep}").click()
    assert f"Approved proposal {keep}" in text_of("flash", "Approved")
    by_id(By.ID, f"reject-reason-{drop}").send_keys("hostile markup")
    by_id(By.ID, f"reject-{drop}").click()
    assert f"Rejected proposal {drop}" in text_of("flash", "Rejected")
    assert not browser.find_elements(By.ID, f"proposal-{keep}")
    assert not browser.find_elements(By.ID, f"proposal-{drop}")
    _shot(browser, "2-after-decisions")

    browser.get(f"{console}/audit?ns={urllib.parse.quote(ns)}")
    audit = by_id(By.ID, "audit").text
    assert f"approved {ns} {keep} confirmed by the user" in audit
    assert f"rejected {ns} {drop} hostile markup" in audit
    _shot(browser, "3-audit")

    browser.get(f"{console}/search?ns={urllib.parse.quote(ns)}&q=editor")
    assert "Helix" in by_id(By.ID, "hits").text  # the approved proposal is a memory now
    link = browser.find_elements(By.CSS_SELECTOR, "#hits a")[0]
    link.click()
    assert "version 1" in text_of("versions", "version 1")
    _shot(browser, "4-history")
    browser.get(console + "/stats")
    assert by_id(By.ID, "journal-pending").text == "0"
    assert "closed" in by_id(By.ID, "breakers").text
    _shot(browser, "5-stats")
    with GatewayClient(gateway.address, "master", api_key=MASTER_KEY) as c:
        decided = {p.id: p.state for p in c.proposals("", 500)}
    assert (decided[keep], decided[drop]) == ("approved", "rejected")


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any) -> None:
        return None


def _opener() -> urllib.request.OpenerDirector:
    return urllib.request.build_opener(
        urllib.request.HTTPCookieProcessor(CookieJar()), _NoRedirect()
    )


def _call(
    opener: urllib.request.OpenerDirector, url: str, form: dict[str, str] | None = None
) -> tuple[int, str, Any]:
    data = urllib.parse.urlencode(form).encode() if form is not None else None
    try:
        with opener.open(url, data=data, timeout=10) as r:
            return r.status, r.read().decode(), r.headers
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode(), err.headers


def _login(opener: urllib.request.OpenerDirector, console: str) -> None:
    _, page, _ = _call(opener, console + "/login")
    csrf = page.split('name="csrf" value="')[1].split('"')[0]
    status, _, headers = _call(opener, console + "/login", {"csrf": csrf, "api_key": MASTER_KEY})
    assert status == 303 and headers["Location"] == "/review"


def test_posts_need_the_session_csrf_token_and_pages_escape(
    console: str, gateway: RunningGateway
) -> None:
    _, (pid,) = _propose(gateway, "The user reads " + HOSTILE)
    anonymous = _opener()
    status, _, headers = _call(anonymous, console + "/review")
    assert status == 303 and headers["Location"] == "/login"
    status, _, _ = _call(anonymous, console + "/login", {"csrf": "forged", "api_key": MASTER_KEY})
    assert status == 403  # the login form's own token is missing
    opener = _opener()
    _login(opener, console)
    status, page, headers = _call(opener, console + "/review")
    assert status == 200 and "script-src" not in headers["Content-Security-Policy"]
    assert "default-src 'none'" in headers["Content-Security-Policy"]
    assert "<script>" not in page and "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in page
    assert 'onerror="' not in page
    action = f"{console}/proposals/{pid}/approve"
    for forged in ({}, {"csrf": "wrong"}):
        status, _, _ = _call(opener, action, {**forged, "reason": "csrf"})
        assert status == 403
    with GatewayClient(gateway.address, "master", api_key=MASTER_KEY) as c:
        assert next(p for p in c.proposals("", 500) if p.id == pid).state == "pending"
    csrf = page.split('name="csrf" value="')[1].split('"')[0]
    status, _, _ = _call(opener, action, {"csrf": csrf, "reason": ""})
    assert status == 303  # back to the queue with "give a reason"; nothing decided
    status, page, _ = _call(opener, console + "/review")
    assert "Give a reason" in page and f'id="proposal-{pid}"' in page


def test_an_edit_is_written_by_the_master_and_audited(
    console: str, gateway: RunningGateway
) -> None:
    ns, (pid,) = _propose(gateway, "The user likes tee")
    opener = _opener()
    _login(opener, console)
    _, page, _ = _call(opener, console + "/review")
    csrf = page.split('name="csrf" value="')[1].split('"')[0]
    form = {"csrf": csrf, "content": "The user likes tea", "reason": "typo"}
    status, _, _ = _call(opener, f"{console}/proposals/{pid}/edit", form)
    assert status == 303
    with GatewayClient(gateway.address, "master", api_key=MASTER_KEY) as c:
        proposal = next(p for p in c.proposals("", 500) if p.id == pid)
        assert proposal.state == "rejected" and proposal.reason.endswith(": typo")
        written = proposal.reason.split()[2].rstrip(":")
        mem = c.get(written)
        assert (mem.content, mem.source_agent, mem.namespace) == (
            "The user likes tea",
            "master",
            ns,
        )
        assert mem.metadata["edited_from_proposal"] == pid
        actions = {(e.action, e.target) for e in c.audit(namespace=ns)}
        assert ("write", written) in actions and ("rejected", pid) in actions


def test_failed_logins_are_rate_limited_and_cookies_secure_behind_https(
    console: str,
) -> None:
    """Issue 33 L3: a browser address gets a few wrong keys, then 429 (even with the right key)
    until the window passes; behind an HTTPS proxy (X-Forwarded-Proto) cookies are Secure."""
    from gateway.console import server as console_server

    https = _opener()
    https.addheaders = [("X-Forwarded-Proto", "https")]
    _, _, headers = _call(https, console + "/login")
    assert "Secure" in headers["Set-Cookie"]
    plain = _opener()
    _, page, headers = _call(plain, console + "/login")
    assert "Secure" not in headers["Set-Cookie"]  # plain http on loopback, plaintext gateway
    csrf = page.split('name="csrf" value="')[1].split('"')[0]
    for i in range(console_server.LOGIN_FAILURES):
        status, _, _ = _call(plain, console + "/login", {"csrf": csrf, "api_key": f"guess-{i}"})
        assert status == 401
    status, body, _ = _call(plain, console + "/login", {"csrf": csrf, "api_key": MASTER_KEY})
    assert status == 429 and "Too many failed logins" in body


def test_a_loopback_console_refuses_other_host_names(console: str) -> None:
    """Issue 33 L3: DNS rebinding — a request naming another host reaches 127.0.0.1 but is
    refused; localhost names are served."""
    import http.client

    port = int(console.rsplit(":", 1)[1])

    def status(method: str, host: str) -> int:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        try:
            body = "csrf=x&api_key=y" if method == "POST" else None
            headers = {"Host": host, "Content-Type": "application/x-www-form-urlencoded"}
            conn.request(method, "/login", body=body, headers=headers)
            return conn.getresponse().status
        finally:
            conn.close()

    assert status("GET", "attacker.example") == 421
    assert status("POST", "attacker.example:80") == 421
    for host in ("localhost", f"127.0.0.1:{port}", "[::1]:9"):
        assert status("GET", host) == 200, host
