"""Recall worker processes: recall pipelines beside the gateway's own, each with its own GIL.

The gateway process keeps gRPC, admission, checks, the recall cache, audit rows and access
statistics, and every write; a worker (``worker.py``) runs only ``RecallEngine.answer`` on its own
connections to the same stores and its own copy of the vector index. ``pool.py`` starts the
workers, hands each recall to the least busy one over a private Unix socket (``frames.py``) and
streams every change of the gateway's index to them on the same socket (``broadcast.py``), so a
recall sent after a write was applied finds it. docs/SCALING.md has the design and its limits.
"""
