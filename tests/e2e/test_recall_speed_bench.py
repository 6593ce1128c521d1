"""``bench.recall_speed`` runs end to end at a tiny size and prints, per size, recall beside the
query embedding alone and beside the floor (embedding + flat search), from the same run."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from bench import recall_speed
from bench.recall_eval import backend_settings
from bench.serving import gateway_process, settings_env
from gateway.settings import load_settings

LINE = re.compile(
    r"embedded +(\d+) memories: recall p50 +([\d.]+) ms, p95 +([\d.]+) ms \| query embed p50 +"
    r"([\d.]+) ms, \+ flat search \(floor\) +([\d.]+) ms \| recall - embed +([+-][\d.]+) ms "
    r"\(target <= \+5\), recall - floor +([+-][\d.]+) ms"
)


def test_recall_speed_prints_recall_beside_the_embedding_and_the_floor(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert recall_speed.main(["--memories", "30,60", "--questions", "4", "--embedder", "hash"]) == 0
    found = [LINE.search(line) for line in capsys.readouterr().out.splitlines()]
    rows = [m for m in found if m]
    assert [int(m.group(1)) for m in rows] == [30, 60]
    for m in rows:
        recall, embed, floor = float(m.group(2)), float(m.group(4)), float(m.group(5))
        assert recall > 0 and 0 < embed <= floor
        assert float(m.group(6)) == pytest.approx(recall - embed, abs=0.11)
        assert float(m.group(7)) == pytest.approx(recall - floor, abs=0.11)


STAGE = re.compile(r"^ {10}(.+?) +p50 +([\d.]+) ms(?: \(in (\d+) of (\d+)\))?$")


def test_stages_break_each_recall_down_by_its_traced_spans(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert (
        recall_speed.main(
            ["--memories", "40", "--questions", "6", "--embedder", "hash", "--stages"]
        )
        == 0
    )
    out = capsys.readouterr().out.splitlines()
    (recall_line,) = [m for m in map(LINE.search, out) if m]
    stages = {m.group(1): m for m in map(STAGE.match, out) if m}
    for name in (
        recall_speed.RPC_SPAN,
        "recall",
        "recall.embed",
        "recall.keyword_search",
        "recall.vector_search",
        recall_speed.TRANSPORT,
    ):
        assert name in stages, f"no {name!r} stage in {list(stages)}"
        assert stages[name].group(3) is None, f"{name} missing from some recalls"
    p50 = {name: float(m.group(2)) for name, m in stages.items()}
    # nested spans: the server span holds the pipeline, which holds the embedding
    assert 0 < p50["recall.embed"] <= p50["recall"] <= p50[recall_speed.RPC_SPAN]
    # the call's p50 is printed to 0.1 ms
    assert p50[recall_speed.RPC_SPAN] <= float(recall_line.group(2)) + 0.05
    assert p50[recall_speed.TRANSPORT] > 0


@pytest.mark.parametrize("backend", ["embedded", pytest.param("real", id="redis-neo4j")])
def test_the_gateway_process_gets_the_benchmarks_settings_through_its_environment(
    backend: str, tmp_path: Path
) -> None:
    """``memgate serve`` (``bench.serving.gateway_process``) builds its settings from
    ``MEMGATE_*`` variables: they must give back every setting the benchmark chose."""
    settings = replace(
        backend_settings(backend, tmp_path, "hash"), api_keys={"master": "k1", "a2": "k2"}
    )
    assert load_settings(env=settings_env(settings)) == settings


def test_a_gateway_process_that_cannot_start_says_why(tmp_path: Path) -> None:
    bad = replace(backend_settings("embedded", tmp_path, "hash"), embedder="no-such-model")
    with pytest.raises(SystemExit) as exc, gateway_process(bad, timeout_s=60):
        pass
    assert "exited (code 2) before serving" in str(exc.value)
    assert "embedder must be one of" in str(exc.value)
