"""What the applier announces: the namespaces a batch of applied writes touched. Subscribers
(the recall cache, the index flusher) react; the applier never calls up into them."""

from __future__ import annotations

import logging
from collections.abc import Callable

log = logging.getLogger("memgate.events")

Listener = Callable[[frozenset[str]], None]

#: announced when what changed cannot be named by namespace (memories erased outright on
#: another replica, a rebuild): any namespace may have changed. "*" is no namespace's name.
EVERY_NAMESPACE: frozenset[str] = frozenset({"*"})


class AppliedEvents:
    def __init__(self) -> None:
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def publish(self, namespaces: frozenset[str]) -> None:
        for listener in self._listeners:
            try:
                listener(namespaces)
            except Exception:  # noqa: BLE001 - a listener must not stop the applier
                log.exception("a listener of applied writes failed")
