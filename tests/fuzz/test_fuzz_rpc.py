"""Fuzzing the gRPC API (issue 8): every request message, generated from the proto's descriptors,
plus raw garbage bodies, sent to one embedded gateway as master, as a sub-agent and with a
malformed agent id. Invariants: never INTERNAL or UNKNOWN; the server stays SERVING; memory stays
bounded; a rejected request changes no state (no journal entry, no proposal).

Profiles (``MEMGATE_FUZZ_PROFILE``): ``ci`` (default, ~500 cases, deterministic) and ``full``
(5,000+ cases, random); docs/SECURITY.md "Fuzzing" has the command and the last figures.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memgate.v1 import memgate_pb2 as pb
from memgate.v1 import memgate_pb2_grpc as pb_grpc
from tests.fuzz import strategies as fz

_COMMON = dict(
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
    print_blob=True,
)
settings.register_profile(
    "ci",
    max_examples=int(os.environ.get("MEMGATE_FUZZ_EXAMPLES", 480)),
    derandomize=True,
    **_COMMON,
)
settings.register_profile(
    "full", max_examples=int(os.environ.get("MEMGATE_FUZZ_EXAMPLES", 4500)), **_COMMON
)
PROFILE = os.environ.get("MEMGATE_FUZZ_PROFILE", "ci")
#: garbage bodies get a quarter of the message cases
GARBAGE_SHARE = 4
#: memory bound of the gateway (its own process): the resident set stays under RSS_LIMIT_MB,
#: and after a warm-up (caches fill, the allocator keeps the high-water mark of multi-megabyte
#: bodies) it grows less than RSS_GROWTH_MB: a leak would grow with the number of cases
RSS_LIMIT_MB = 1_000
RSS_GROWTH_MB = 200
WARM_UP_CASES = 500
CALLERS = (("x-agent-id", "master"),), (("x-agent-id", "sub-fuzz"),), (("x-agent-id", "bad id"),)
BAD = {grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN}
SEEN: Counter[str] = Counter()


def _rss_mb(pid: int | str = "self") -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS line")


class Target:
    def __init__(self, address: str, pid: int) -> None:
        self.pid = pid
        self.channel = grpc.insecure_channel(
            address, options=[("grpc.max_send_message_length", 32 << 20)]
        )
        self.stub = pb_grpc.MemoryGatewayStub(self.channel)
        self.health = health_pb2_grpc.HealthStub(self.channel)
        self.rss_start = _rss_mb(pid)
        self.rss_warm = 0.0
        self.samples: list[tuple[int, int]] = []
        self.cases = 0

    def state(self) -> tuple[int, int]:
        """What a rejected request must not change: journal entries, pending proposals."""
        md = CALLERS[0]
        s = self.stub.Stats(pb.StatsRequest(), metadata=md, timeout=30)
        proposals = self.stub.ListProposals(
            pb.ListProposalsRequest(state="pending", limit=500), metadata=md, timeout=30
        )
        return s.journal_pending + s.journal_applied, len(proposals.proposals)

    def send(self, method: str, body: bytes, metadata: tuple[tuple[str, str], ...]) -> None:
        before = self.state()
        call = self.channel.unary_unary(f"/memgate.v1.MemoryGateway/{method}")
        code = grpc.StatusCode.OK
        details = ""
        try:
            call(body, metadata=metadata, timeout=60)
        except grpc.RpcError as err:
            code, details = err.code(), err.details() or ""
        self.cases += 1
        SEEN[code.name] += 1
        assert code not in BAD, f"{method} as {metadata[0][1]!r}: {code.name}: {details}"
        if code is not grpc.StatusCode.OK:
            after = self.state()
            assert after[0] <= before[0], f"{method} was rejected ({code.name}) but journaled"
            assert after[1] <= before[1], f"{method} was rejected ({code.name}) but proposed"
        if self.cases % 50 == 0:
            self.check_alive()

    def check_alive(self) -> None:
        status = self.health.Check(health_pb2.HealthCheckRequest(service=""), timeout=30).status
        assert status == health_pb2.HealthCheckResponse.SERVING
        rss = _rss_mb(self.pid)
        if self.cases % 500 == 0:
            self.samples.append((self.cases, round(rss)))
        if not self.rss_warm and self.cases >= WARM_UP_CASES:
            self.rss_warm = rss
        assert rss < RSS_LIMIT_MB, f"RSS is {rss:.0f} MB after {self.cases} cases"
        if self.rss_warm:
            grown = rss - self.rss_warm
            assert grown < RSS_GROWTH_MB, (
                f"RSS grew by {grown:.0f} MB after the warm-up ({self.cases} cases): "
                f"samples {self.samples}"
            )


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    data = tmp_path_factory.mktemp("fuzz")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.fuzz.gateway_process", str(data)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdin is not None
    try:
        address = proc.stdout.readline().strip()
        assert address, "the gateway process did not start"
        t = Target(address, proc.pid)
        started = time.monotonic()
        try:
            yield t
            t.check_alive()
        finally:
            took = time.monotonic() - started
            print(
                f"\nfuzz[{PROFILE}]: {t.cases} cases in {took:.0f}s, gateway RSS "
                f"{t.rss_start:.0f} -> {_rss_mb(proc.pid):.0f} MB (after warm-up "
                f"{t.rss_warm:.0f}; samples {t.samples}), codes {dict(SEEN)}"
            )
            t.channel.close()
    finally:
        proc.stdin.close()
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


REQUESTS = st.sampled_from(sorted(fz.METHODS)).flatmap(
    lambda m: st.tuples(st.just(m), fz.request(m), st.sampled_from(CALLERS))
)


@settings(settings.get_profile(PROFILE))
@given(case=REQUESTS)
def test_every_request_message(target: Target, case: tuple[str, bytes, tuple]) -> None:  # type: ignore[type-arg]
    target.send(*case)


@settings(
    settings.get_profile(PROFILE),
    max_examples=max(1, settings.get_profile(PROFILE).max_examples // GARBAGE_SHARE),
)
@given(method=st.sampled_from(sorted(fz.METHODS)), body=fz.GARBAGE, caller=st.sampled_from(CALLERS))
def test_garbage_bodies(target: Target, method: str, body: bytes, caller: tuple) -> None:  # type: ignore[type-arg]
    target.send(method, body, caller)
