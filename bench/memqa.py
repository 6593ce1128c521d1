"""Offline memory-QA evaluation (seed 000 §6): recall, precision and fact consistency on
cross-session questions, through a real gateway and the real embedder.

    python bench/memqa.py                       # embedded gateway, tests/data/memqa.json
    python bench/memqa.py --target HOST:PORT    # a running gateway

recall@k     — the answering memory is among the top k hits;
precision@1  — the top hit is the answering memory;
consistency  — for facts that changed, the answer is the latest version, never the stale one.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gateway.client import GatewayClient  # noqa: E402
from gateway.embedding.factory import EMBEDDER_KINDS  # noqa: E402
from gateway.rpc.server import serve_in_thread  # noqa: E402
from gateway.settings import DEFAULT_EMBEDDER, Settings  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "memqa.json"


@dataclass
class Report:
    questions: int = 0
    recall_at_k: float = 0.0
    precision_at_1: float = 0.0
    consistency: float = 1.0
    k: int = 5
    misses: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [
            f"questions: {self.questions}",
            f"recall@{self.k}: {self.recall_at_k:.2f}",
            f"precision@1: {self.precision_at_1:.2f}",
            f"fact consistency: {self.consistency:.2f}",
        ]
        out += [f"  miss: {m}" for m in self.misses]
        return out


def evaluate(target: str, data: dict, k: int = 5, namespace: str = "") -> Report:  # type: ignore[type-arg]
    ns = namespace or f"{data['namespace']}-{uuid.uuid4().hex[:8]}"
    with GatewayClient(target, agent_id="master") as c:
        for session in data["sessions"]:
            items = [
                dict(
                    namespace=ns,
                    layer=w["layer"],
                    content=w["content"],
                    type=w.get("type", ""),
                    metadata=w.get("metadata", {}),
                    confidence=w.get("confidence"),
                    session_id=session["session"],
                )
                for w in session["writes"]
            ]
            c.batch_write(items, wait=True)
        found = top1 = consistent = changed = 0
        report = Report(questions=len(data["questions"]), k=k)
        for q in data["questions"]:
            hits = c.recall(q["q"], namespaces=[ns], top_k=k, session_id="eval-new-session")
            contents = [h.content for h in hits if h.layer != "working"]
            ok = any(q["expect"] in text for text in contents)
            found += ok
            top1 += bool(contents) and q["expect"] in contents[0]
            if not ok:
                report.misses.append(f"{q['q']!r} → {contents[:2]}")
            elif q["expect"] not in contents[0]:
                report.misses.append(f"(not first) {q['q']!r} → {contents[:1]}")
            if "stale" in q:
                changed += 1
                consistent += (
                    bool(contents)
                    and q["expect"] in contents[0]
                    and not any(q["stale"] in text for text in contents)
                )
    n = max(1, report.questions)
    report.recall_at_k = found / n
    report.precision_at_1 = top1 / n
    report.consistency = consistent / changed if changed else 1.0
    return report


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--target", default="")
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--embedder", default=DEFAULT_EMBEDDER, choices=list(EMBEDDER_KINDS))
    args = ap.parse_args()
    data = json.loads(Path(args.data).read_text(encoding="utf-8"))
    if args.target:
        report = evaluate(args.target, data, args.k)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            settings = Settings(port=0, data_dir=Path(tmp), embedder=args.embedder)
            with serve_in_thread(settings) as target:
                report = evaluate(target, data, args.k)
    print("\n".join(report.lines()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
