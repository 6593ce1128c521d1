"""The review console in a real headless Chromium (Debian's chromium + chromium-driver): log in
with the master's key, approve one proposal, reject another, watch them leave the queue and the
audit entries appear. Hostile memory text stays text. Screenshots go to test-artifacts/console/.

Without Chromium the browser test is skipped locally and fails in CI (CI=true):
scripts/test.sh installs it."""

from __future__ import annotations

import os
import shutil
import socket
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
from tests.tags import fresh_tag

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
    ns = f"user/u-{fresh_tag(8)}"
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
    browser.get(f"{console}/review?ns={urllib.parse.quote(ns)}")
    _shot(browser, "1-review-list")
    # one row each; the hostile one shown as text, never run
    assert by_id(By.ID, f"row-{keep}").is_displayed()
    assert "<script>window.__pwned = 1</script>" in by_id(By.ID, f"row-{drop}").text
    assert browser.execute_script("return window.__pwned === undefined")
    by_id(By.ID, f"open-{drop}").click()
    card = text_of(f"proposal-{drop}", "said in session 1")
    assert "<script>window.__pwned = 1</script>" in card
    assert browser.execute_script("return window.__pwned === undefined")
    by_id(By.ID, f"reject-reason-{drop}").send_keys("hostile markup")
    by_id(By.ID, f"reject-{drop}").click()
    assert f"Rejected proposal {drop}" in text_of("flash", "Rejected")
    browser.get(f"{console}/proposal/{keep}")
    by_id(By.ID, f"approve-reason-{keep}").send_keys("confirmed by the user")
    by_id(By.ID, f"approve-{keep}").click()
    assert f"Approved proposal {keep}" in text_of("flash", "Approved")
    assert not browser.find_elements(By.ID, f"row-{keep}")
    assert not browser.find_elements(By.ID, f"row-{drop}")
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
    assert "Give a reason" in page and f'id="row-{pid}"' in page


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


def test_pending_facts_are_listed_and_confirmed(console: str, gateway: RunningGateway) -> None:
    """A fact a sub-agent proposed (answered an id of its own) is on the namespace's pending
    facts page with the real id; Confirm promotes it (CSRF-checked), and it leaves the page."""
    ns = f"user/u-{fresh_tag(8)}"
    with GatewayClient(gateway.address, "helper", api_key=HELPER_KEY) as h:
        h.propose_fact(ns, "The user keeps " + HOSTILE, session_id="s1")
    opener = _opener()
    _login(opener, console)
    status, page, _ = _call(opener, console + "/facts?" + urllib.parse.urlencode({"ns": ns}))
    assert status == 200 and "<script>" not in page and "1 pending fact(s)" in page
    pid = page.split('id="fact-')[1].split('"')[0]
    with GatewayClient(gateway.address, "master", api_key=MASTER_KEY) as c:
        assert [f.id for f in c.pending_facts(ns)] == [pid]
    csrf = page.split('name="csrf" value="')[1].split('"')[0]
    action = f"{console}/facts/{pid}/confirm"
    assert _call(opener, action, {"csrf": "wrong", "ns": ns})[0] == 403
    status, _, headers = _call(opener, action, {"csrf": csrf, "ns": ns})
    assert status == 303 and headers["Location"].startswith("/facts?ns=")
    status, page, _ = _call(opener, console + headers["Location"])
    assert "Confirmed pending fact" in page and "0 pending fact(s)" in page
    with GatewayClient(gateway.address, "master", api_key=MASTER_KEY) as c:
        assert c.pending_facts(ns) == [] and c.recall("keeps", [ns]).hits
    status, page, _ = _call(opener, console + "/facts?ns=not+a+namespace")
    assert status == 200 and "INVALID_ARGUMENT" in page


# ---- at scale: 50+ items, the list, filters, pages, bulk decisions, grouping, diff, audit
SCOUT_KEY = "scout-key-" + uuid.uuid4().hex
TOPICS = ["tea", "chess", "jazz", "rust", "maps", "kites", "opera", "tofu", "golf", "yoga"]


@pytest.fixture(scope="module")
def big_gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningGateway]:
    settings = gateway_settings(
        tmp_path_factory.mktemp("console-scale"),
        api_keys={"master": MASTER_KEY, "helper": HELPER_KEY, "scout": SCOUT_KEY},
    )
    with running_gateway(settings) as gw:
        yield gw


@pytest.fixture
def big_console(big_gateway: RunningGateway) -> Iterator[str]:
    server: ConsoleServer = make_server(big_gateway.address, "127.0.0.1:0")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def _fill(gw: RunningGateway) -> dict[str, Any]:
    """54 proposals in two namespaces: 45 distinct + 3 identical by the helper in one, 6 by the
    scout in the other (one contradicts a fact with 3 versions); 2 quarantined claims."""
    home, work = "user/scale-home", "user/scale-work"
    with GatewayClient(gw.address, "master", api_key=MASTER_KEY) as m:
        for city in ("Berlin", "Hamburg", "Paris"):
            fact = m.write(work, "semantic", f"The user lives in {city}", wait=True, confidence=0.9)
        for food in ("The user is allergic to peanuts", "The user is allergic to shellfish"):
            allergy = m.write(work, "semantic", food, wait=True, confidence=0.95)
        weak = [
            m.write_result(work, "semantic", text, wait=True, confidence=0.2)
            for text in ("The user is not allergic to peanuts", "The user lives in Lyon")
        ]
        held = {q.id for q in m.review_queue(100)}
    queued = [w.id for w in weak if w.id in held]
    with GatewayClient(gw.address, "helper", api_key=HELPER_KEY) as h:
        distinct = [
            h.write_result(
                home,
                "semantic",
                f"The user likes {TOPICS[i % 10]} number {i}",
                task_id=f"task-{i % 4}",
                evidence=[f"turn {i}"],
            ).proposal_id
            for i in range(45)
        ]
        twins = [
            h.write_result(home, "semantic", "The user's dog is called Rex").proposal_id
            for _ in range(3)
        ]
    with GatewayClient(gw.address, "scout", api_key=SCOUT_KEY) as s:
        scouted = [
            s.write_result(work, "semantic", f"The user works on {t} on Fridays").proposal_id
            for t in TOPICS[:5]
        ]
        rome = s.write_result(
            work, "semantic", "The user lives in Rome", confidence=0.6, task_id="move-42"
        ).proposal_id
    return {
        "home": home,
        "work": work,
        "fact": fact,
        "distinct": distinct,
        "twins": twins,
        "scouted": scouted,
        "rome": rome,
        "queued": queued,
        "shellfish": allergy,
    }


def test_review_at_scale_in_a_real_browser(
    browser: Any, big_console: str, big_gateway: RunningGateway
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    data = _fill(big_gateway)
    assert len(data["queued"]) == 2, "both weaker contradictions wait in the quarantine queue"
    console, by_id = big_console, browser.find_element

    def rows() -> list[Any]:
        return list(browser.find_elements(By.CSS_SELECTOR, "#proposals tr.row"))

    def flash(containing: str) -> str:
        located = (By.ID, "flash")
        WebDriverWait(browser, 30).until(ec.text_to_be_present_in_element(located, containing))
        return str(by_id(*located).text)

    def height() -> int:
        return int(browser.execute_script("return document.body.getBoundingClientRect().height"))

    browser.get(console + "/login")
    by_id(By.ID, "api_key").send_keys(MASTER_KEY)
    by_id(By.ID, "login").click()
    WebDriverWait(browser, 30).until(ec.url_contains("/review"))
    # 54 proposals, the 3 identical ones one row: 52 rows, 25 a page
    assert "54 pending proposal(s)" in by_id(By.CSS_SELECTOR, ".tabs").text
    assert "52 row(s) match (54 proposal(s)" in by_id(By.ID, "matching").text
    assert len(rows()) == 25 and by_id(By.ID, "page-of").text == "page 1 of 3"
    first_page = height()
    assert first_page < 1600, f"a page of 25 rows is {first_page} px"
    # issue 47: at 1,400 px the list fits, "competes with" included (it scrolled sideways)
    assert browser.execute_script(
        "return document.documentElement.scrollWidth <= window.innerWidth"
    ), "the proposals list is wider than the window"
    _shot(browser, "scale-1-list")
    # the quarantine queue is reachable without scrolling
    link = by_id(By.ID, "queue-link")
    assert "2 waiting" in link.text
    assert link.location["y"] < int(browser.execute_script("return window.innerHeight"))
    browser.get(console + "/review?size=100")
    assert len(rows()) == 52
    all_rows = height()
    assert all_rows < 3000, f"all 52 rows are {all_rows} px"
    print(f"console heights: 25 rows {first_page} px, 52 rows {all_rows} px")

    browser.get(console + "/review")
    by_id(By.ID, "next-page").click()
    WebDriverWait(browser, 30).until(ec.text_to_be_present_in_element((By.ID, "page-of"), "2 of"))
    assert len(rows()) == 25
    by_id(By.ID, "next-page").click()
    WebDriverWait(browser, 30).until(ec.text_to_be_present_in_element((By.ID, "page-of"), "3 of"))
    assert len(rows()) == 2 and not browser.find_elements(By.ID, "next-page")

    # filters: proposer, namespace prefix, conflicts only
    by_id(By.ID, "f-proposer").send_keys("scout")
    by_id(By.ID, "filter").click()
    WebDriverWait(browser, 30).until(ec.url_contains("proposer=scout"))
    assert len(rows()) == 6 and by_id(By.ID, "page-of").text == "page 1 of 1"
    browser.get(console + "/review?ns=user/scale-home&kind=conflict")
    assert not rows() and by_id(By.ID, "no-proposals")
    browser.get(console + "/review?kind=conflict")
    (row,) = rows()
    rome = data["rome"]
    assert row.get_attribute("id") == f"row-{rome}"
    assert "user:residence" in row.text and "Paris" in row.text and "overlap" in row.text
    assert "move-42" in row.text  # the task id
    _shot(browser, "scale-2-conflicts")

    # identical proposals: one row, ×3, decided together (each audited)
    browser.get(console + "/review?ns=user/scale-home&size=100")
    twins = data["twins"]
    assert by_id(By.ID, f"count-{twins[0]}").text == "×3"
    assert not browser.find_elements(By.ID, f"row-{twins[1]}")
    # bulk: the twins' row and 9 others, one reason
    picked = [twins[0], *data["distinct"][:9]]
    for pid in picked:
        by_id(By.ID, f"pick-{pid}").click()
    by_id(By.ID, "bulk-reason").send_keys("bulk: not about the user")
    by_id(By.ID, "bulk-reject").click()
    assert "Rejected 12 proposal(s)" in flash("Rejected")
    assert "ns=user%2Fscale-home" in browser.current_url  # back to the same filtered list
    assert len(rows()) == 36
    _shot(browser, "scale-3-after-bulk")

    # the conflict's detail: the fact it supersedes, approve and supersede
    browser.get(f"{console}/proposal/{rome}")
    detail = by_id(By.ID, f"proposal-{rome}").text
    assert "conflicts on user:residence" in detail and "The user lives in Paris" in detail
    assert "move-42" in detail and by_id(By.ID, f"approve-{rome}").text == "Approve and supersede"
    by_id(By.ID, f"approve-reason-{rome}").send_keys("the user moved")
    by_id(By.ID, f"approve-{rome}").click()
    flash("Approved")

    # the fact's history: 4 versions, each a diff against the one before, nothing cut off
    browser.get(f"{console}/memory/{data['fact']}")
    assert len(browser.find_elements(By.CSS_SELECTOR, "#versions .version")) == 4
    assert by_id(By.CSS_SELECTOR, "#version-2 del").text == "Berlin"
    assert by_id(By.CSS_SELECTOR, "#version-2 ins").text == "Hamburg"
    assert by_id(By.CSS_SELECTOR, "#version-4 .diff del").text == "Paris"
    assert by_id(By.CSS_SELECTOR, "#version-4 .diff ins").text == "Rome"
    assert browser.execute_script(
        "return document.documentElement.scrollWidth <= window.innerWidth"
    ), "the history is wider than the window"
    _shot(browser, "scale-4-history-diff")

    # the quarantine queue in its own tab: release one, forget the other
    browser.get(console + "/queue")
    release, forget = data["queued"]
    assert len(browser.find_elements(By.CSS_SELECTOR, "#queue tr.row")) == 2
    by_id(By.ID, f"pick-{release}").click()
    by_id(By.ID, "queue-reason").send_keys("checked with the user")
    by_id(By.ID, "queue-approve").click()
    assert "Approved 1 queued memory(ies)" in flash("Approved")
    _shot(browser, "scale-5-queue")

    # the namespaces and agents overview
    browser.get(console + "/namespaces")
    assert "5" in by_id(By.ID, "ns-user/scale-work").text  # the scout's 5 left pending
    assert "36" in by_id(By.ID, "ns-user/scale-home").text
    assert "scout" in by_id(By.ID, "agents").text

    # "all rows on this page": the scout's five left, rejected with one reason, each audited
    browser.get(console + "/review?proposer=scout")
    assert len(rows()) == 5
    by_id(By.ID, "pick-page").click()
    by_id(By.ID, "bulk-reason").send_keys("not the user's schedule")
    by_id(By.ID, "bulk-reject").click()
    assert "Rejected 5 proposal(s)" in flash("Rejected")
    assert not rows() and "proposer=scout" in browser.current_url

    # forget needs a reason and the confirmation ticked
    browser.get(f"{console}/memory/{data['shellfish']}")
    by_id(By.ID, "forget-reason").send_keys("the user asked")
    by_id(By.ID, "forget").click()
    assert "Tick the confirmation" in flash("Tick")
    by_id(By.ID, "forget-reason").send_keys("the user asked")
    by_id(By.ID, "forget-confirm").click()
    by_id(By.ID, "forget").click()
    assert "only a tombstone stays" in flash("Forgot")
    assert not browser.find_elements(By.ID, "forget-form")
    assert "forget user/scale-work" in by_id(By.ID, "audit").text

    # the stats page: what waits, and since when
    browser.get(console + "/stats")
    assert by_id(By.ID, "pending-count").text == "36"  # 54 - 12 - 1 - 5
    assert by_id(By.ID, "queued-count").text == "1"
    assert by_id(By.ID, "oldest-pending").text.endswith("UTC")

    # a reviewer's search is audited as the console's; browsing is not audited at all
    browser.get(console + "/search?ns=user/scale-work&q=where does the user live")
    assert "Rome" in by_id(By.ID, "hits").text
    with GatewayClient(big_gateway.address, "master", api_key=MASTER_KEY) as m:
        decided = {p.id: p for p in m.proposals("", 500)}
        entries = m.audit(namespace="user/scale-home", limit=500) + m.audit(
            namespace="user/scale-work", limit=500
        )
        assert m.history(data["fact"])[-1].content == "The user lives in Rome"
        assert forget in {q.id for q in m.review_queue(100)}
    rejected = [e for e in entries if e.action == "rejected"]
    bulk = [e for e in rejected if e.detail == "bulk: not about the user"]
    assert sorted(e.target for e in bulk) == sorted([*twins, *data["distinct"][:9]])
    by_page = [e.target for e in rejected if e.detail == "not the user's schedule"]
    assert sorted(by_page) == sorted(data["scouted"]) and len(rejected) == 17
    assert all(decided[pid].state == "rejected" for pid in twins + data["distinct"][:9])
    assert decided[data["distinct"][9]].state == "pending"
    master_reads = [e for e in entries if e.agent_id == "master" and e.action in ("recall", "read")]
    assert master_reads == [], "browsing the console wrote master reads into the audit log"
    assert [e.action for e in entries if "recall" in e.action] == ["console_recall"]
    forgets = [e for e in entries if e.action == "forget"]
    assert [(f.agent_id, f.detail) for f in forgets] == [
        ("master", f"{data['shellfish']}: the user asked")
    ]


def test_bulk_forms_are_checked_and_change_nothing_when_wrong(
    console: str, gateway: RunningGateway
) -> None:
    _, ids = _propose(gateway, "The user sails", "The user knits")
    opener = _opener()
    _login(opener, console)
    _, page, _ = _call(opener, console + "/review")
    csrf = page.split('name="csrf" value="')[1].split('"')[0]
    bulk = console + "/proposals/bulk"
    good = {"csrf": csrf, "reason": "r", "action": "reject", "id": ",".join(ids)}
    cases = [
        ({**good, "id": ids[0] + ",<x>"}, 400),  # a malformed id
        ({**good, "id": ",".join(f"p{i}" for i in range(501))}, 400),  # over the cap
        ({**good, "action": "delete"}, 400),
        ({**good, "csrf": "forged"}, 403),
        ({**good, "reason": " "}, 303),  # "give a reason": nothing decided
    ]
    for form, expected in cases:
        status, _, _ = _call(opener, bulk, form)
        assert status == expected, form
    with GatewayClient(gateway.address, "master", api_key=MASTER_KEY) as c:
        states = {p.id: p.state for p in c.proposals("", 500)}
    assert [states[i] for i in ids] == ["pending", "pending"]
    status, _, headers = _call(opener, bulk, {**good, "back": "https://evil.example/"})
    assert status == 303 and headers["Location"] == "/review"  # never off the console
    # issue 49 N5: a CR/LF in ``back`` never starts a header of its own
    status, _, headers = _call(
        opener, bulk, {**good, "id": "p-none", "back": "/review\r\nSet-Cookie: owned=1"}
    )
    assert "owned" not in headers.get("Set-Cookie", "") and "\n" not in headers["Location"]
    assert headers["Location"].startswith("/review")
    with GatewayClient(gateway.address, "master", api_key=MASTER_KEY) as c:
        states = {p.id: p.state for p in c.proposals("", 500)}
        assert [states[i] for i in ids] == ["rejected", "rejected"]
        audited = [e for e in c.audit(limit=500) if e.action == "rejected" and e.target in ids]
    assert len(audited) == 2 and {e.detail for e in audited} == {"r"}


def test_the_console_label_is_the_masters_only(gateway: RunningGateway) -> None:
    """``x-memgate-via: console`` turns the master's recall/get into console_recall/console_read
    in the audit log; from a sub-agent it is PERMISSION_DENIED, an unknown value
    INVALID_ARGUMENT, and neither reads nor audits anything."""
    from gateway.client import GatewayError

    ns = f"user/u-{fresh_tag(8)}"
    with GatewayClient(gateway.address, "master", api_key=MASTER_KEY) as m:
        mid = m.write(ns, "semantic", "The user rows on Sundays", wait=True)
    with GatewayClient(gateway.address, "master", api_key=MASTER_KEY, via="console") as c:
        assert [h.id for h in c.recall("rowing", [ns])] == [mid]
        c.get(mid)
    refused = [
        ("helper", HELPER_KEY, "console", "PERMISSION_DENIED"),
        ("master", MASTER_KEY, "agent", "INVALID_ARGUMENT"),
        ("master", MASTER_KEY, "x" * 5000, "INVALID_ARGUMENT"),
    ]
    for agent, key, via, code in refused:
        with GatewayClient(gateway.address, agent, api_key=key, via=via, retries=0) as x:
            for call in (lambda: x.recall("rowing", [ns]), lambda: x.get(mid)):
                with pytest.raises(GatewayError) as err:
                    call()
                assert err.value.code.name == code
    with GatewayClient(gateway.address, "master", api_key=MASTER_KEY) as m:
        actions = sorted((e.agent_id, e.action) for e in m.audit(namespace=ns))
    assert actions == [
        ("master", "console_read"),
        ("master", "console_recall"),
        ("master", "write"),
    ]


def test_erasing_a_namespace_needs_its_name_twice_and_a_reason(
    console: str, gateway: RunningGateway
) -> None:
    ns, (pid,) = _propose(gateway, "The user owns a kayak")
    with GatewayClient(gateway.address, "master", api_key=MASTER_KEY) as m:
        m.write(ns, "semantic", "The user paddles on Sundays", wait=True)
    opener = _opener()
    _login(opener, console)
    status, page, _ = _call(opener, console + "/namespaces")
    assert status == 200 and f'id="ns-{ns}"' in page
    csrf = page.split('name="csrf" value="')[1].split('"')[0]
    erase = console + "/namespaces/erase"
    for form in (
        {"namespace": ns, "confirm": ns + "x", "reason": "asked"},
        {"namespace": ns, "confirm": ns, "reason": " "},
        {"namespace": ns, "confirm": ns, "reason": "asked", "csrf": "forged"},
    ):
        status, _, _ = _call(opener, erase, {"csrf": csrf, **form})
        assert status in (303, 403)
    with GatewayClient(gateway.address, "master", api_key=MASTER_KEY) as m:
        assert ns in m.namespaces("user/").namespaces  # nothing erased yet
    status, _, _ = _call(
        opener, erase, {"csrf": csrf, "namespace": ns, "confirm": ns, "reason": "asked"}
    )
    assert status == 303
    _, page, _ = _call(opener, console + "/namespaces")
    assert f"Erased {ns}" in page and f'id="ns-{ns}"' not in page
    with GatewayClient(gateway.address, "master", api_key=MASTER_KEY) as m:
        assert ns not in m.namespaces("user/").namespaces
        assert pid not in {p.id for p in m.proposals("", 500)}  # its proposals went too
        assert any(e.action == "forget_namespace" for e in m.audit(namespace=ns))


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


def test_a_form_length_that_is_not_a_number_is_refused(console: str) -> None:
    """Issue 49 N4: ``Content-Length: -1`` made the server read to the end of the stream, past
    the form-size cap; any length that is not a plain number is refused like an oversize one."""
    import http.client

    port = int(console.rsplit(":", 1)[1])
    for length in ("-1", "abc", "99999999"):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        try:
            conn.putrequest("POST", "/login")
            conn.putheader("Host", f"127.0.0.1:{port}")
            conn.putheader("Content-Type", "application/x-www-form-urlencoded")
            conn.putheader("Content-Length", length)
            conn.endheaders()
            conn.send(b"api_key=x")
            assert conn.getresponse().status == 413, length
        finally:
            conn.close()


def test_an_unreachable_gateway_is_not_a_wrong_key(gateway: RunningGateway) -> None:
    """Issue 49 N11: a gateway the console cannot reach (down, or TLS that does not match) is
    said as such (502, what to check), never as a wrong key, and is no failed login: the
    attempts past the failure limit are still 502, not 429."""
    from gateway.console import server as console_server

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    server: ConsoleServer = make_server(f"127.0.0.1:{closed}", "127.0.0.1:0")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        opener = _opener()
        _, page, _ = _call(opener, url + "/login")
        csrf = page.split('name="csrf" value="')[1].split('"')[0]
        for _ in range(console_server.LOGIN_FAILURES + 1):
            status, body, _ = _call(opener, url + "/login", {"csrf": csrf, "api_key": MASTER_KEY})
            assert status == 502 and "cannot reach the gateway" in body, (status, body[:200])
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def test_long_proposals_fit_a_1400_px_window(
    browser: Any, console: str, gateway: RunningGateway
) -> None:
    """Issue 47: long proposals beside a long fact they compete with made the list scroll
    sideways at 1,400 px (the "competes with" column cut off)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    long_place = "a small flat above the old bakery on the corner of Linden Street and " * 3
    ns = f"user/wide-{fresh_tag(8)}"
    with GatewayClient(gateway.address, "master", api_key=MASTER_KEY) as m:
        m.write(ns, "semantic", f"The user lives in Berlin, in {long_place}", wait=True)
    with GatewayClient(gateway.address, "helper", api_key=HELPER_KEY) as h:
        assert h.write_result(
            ns, "semantic", f"The user lives in Munich, in {long_place}", confidence=0.9
        ).proposal_id
    browser.get(console + "/login")
    browser.find_element(By.ID, "api_key").send_keys(MASTER_KEY)
    browser.find_element(By.ID, "login").click()
    WebDriverWait(browser, 30).until(ec.url_contains("/review"))
    browser.get(f"{console}/review?ns={ns}")
    assert browser.find_elements(By.CSS_SELECTOR, "#proposals tr.row")
    _shot(browser, "wide-proposals")
    widths = browser.execute_script(
        "return [document.documentElement.scrollWidth, window.innerWidth, "
        "[...document.querySelectorAll('#proposals tr.row td')].map(td => td.offsetWidth)]"
    )
    assert widths[0] <= widths[1], f"the proposals list is wider than the window: {widths}"
