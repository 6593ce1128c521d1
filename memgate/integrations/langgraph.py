"""Deprecated: ``from gateway.integrations.langgraph import MemgateStore`` (this path works for
one release and warns)."""

import warnings

from gateway.integrations.langgraph import *  # noqa: F403
from gateway.integrations.langgraph import (  # noqa: F401
    MAX_VALUE_CHARS,
    AsyncMemgateStore,
    MemgateStore,
    MemgateStoreError,
)

warnings.warn(
    "memgate.integrations.langgraph moved to gateway.integrations.langgraph",
    DeprecationWarning,
    stacklevel=2,
)
