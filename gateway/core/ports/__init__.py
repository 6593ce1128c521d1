"""The contracts the core owns and adapters implement (``ports``, ``control_ports``), plus the tracing and metrics ports, and ``WrappedIndex`` (a ``VectorIndex`` passing every call to another)."""
