"""The Grafana dashboard and the Prometheus scrape config in deploy/ fit a live gateway: every
metric a panel queries is one the gateway's /metrics serves."""

from __future__ import annotations

import json
import re
import socket
import urllib.request
from pathlib import Path

import yaml
from prometheus_client.parser import text_string_to_metric_families

from gateway.client import GatewayClient
from gateway.rpc.server import serve_in_thread
from tests.e2e.conftest import gateway_settings

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
METRIC = re.compile(r"\bmemgate_[a-z0-9_]+\b")
SUFFIXES = {"counter": ("_total",), "histogram": ("_bucket", "_count", "_sum"), "gauge": ("",)}


def _dashboard() -> dict:  # type: ignore[type-arg]
    return json.loads((DEPLOY / "grafana" / "memgate.json").read_text())


def _queried_metrics(dashboard: dict) -> set[str]:  # type: ignore[type-arg]
    return {
        name
        for panel in dashboard["panels"]
        for target in panel["targets"]
        for name in METRIC.findall(target["expr"])
    }


def _served_names(body: str) -> set[str]:
    """Every series name the exposition serves or declares (a labelled metric that saw no event
    yet is declared by its HELP/TYPE lines)."""
    names = set()
    for family in text_string_to_metric_families(body):
        names |= {family.name + suffix for suffix in SUFFIXES.get(family.type, ("",))}
        names |= {s.name for s in family.samples}
    return names


def test_every_dashboard_query_uses_a_served_metric(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with serve_in_thread(gateway_settings(tmp_path, metrics_port=port)) as address:
        with GatewayClient(address, agent_id="master") as c:
            c.write("user/d", "semantic", "The user likes green tea", wait=True)
            c.recall("green tea", namespaces=["user/d"])
        with GatewayClient(address, agent_id="helper") as c:
            c.write("global", "semantic", "Deploys go out on Tuesdays")  # a pending proposal
        body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    served = _served_names(body)
    queried = _queried_metrics(_dashboard())
    assert len(queried) >= 12, queried  # the panels cover RPCs, stores, backlog, recall, review
    missing = sorted(queried - served)
    assert not missing, f"the dashboard queries metrics the gateway does not serve: {missing}"


def test_dashboard_is_wired_to_the_provisioned_prometheus() -> None:
    dashboard = _dashboard()
    ids = [p["id"] for p in dashboard["panels"]]
    assert len(ids) == len(set(ids)) and dashboard["uid"] == "memgate-overview"
    sources = yaml.safe_load(
        (DEPLOY / "grafana" / "provisioning" / "datasources" / "memgate.yml").read_text()
    )["datasources"]
    uid = sources[0]["uid"]
    for panel in dashboard["panels"]:
        assert panel["datasource"]["uid"] == uid
        assert panel["targets"] and all(t["datasource"]["uid"] == uid for t in panel["targets"])
    compose = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())["services"]
    command = compose["gateway"]["command"]
    metrics_port = command[command.index("--metrics-port") + 1]
    scrape = yaml.safe_load((DEPLOY / "prometheus.yml").read_text())["scrape_configs"][0]
    assert scrape["static_configs"][0]["targets"] == [f"gateway:{metrics_port}"]
    assert sources[0]["url"] == "http://prometheus:9090" and "prometheus" in compose
    assert any("memgate.json" in v for v in compose["grafana"]["volumes"])
