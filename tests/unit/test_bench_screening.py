"""``bench.bench_screening`` runs against today's screening API (it broke silently once, when
``screening.screen`` moved): at two calls a run it prints a timed row per input, and the row of
the turn full of personal data names what was redacted."""

from __future__ import annotations

import re

import pytest

from bench import bench_screening

ROW = re.compile(r"^(.+?) +(\d+) +([\d.]+)µs +([\d.]+)µs +([\d.]+)µs +(\S+)$")


def test_the_screening_bench_times_every_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench_screening.main(["--number", "2", "--repeat", "1"]) == 0
    rows = {m.group(1): m for m in map(ROW.match, capsys.readouterr().out.splitlines()) if m}
    assert list(rows) == [name for name, _ in bench_screening.INPUTS]
    for m in rows.values():
        assert all(float(m.group(i)) > 0 for i in (3, 4, 5))
    assert rows["4 KB mixed"].group(2) == "4096"
    assert set(rows["turn with PII"].group(6).split(",")) == {"password", "email", "card", "phone"}
    assert rows["turn, English"].group(6) == "-"
