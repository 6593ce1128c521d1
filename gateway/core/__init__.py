"""The domain core: no transport, driver or store imports (``tests/unit/test_architecture.py``).
Capability folders, lowest first; a module imports only from its own folder or a lower one:

``screening`` (secrets, PII, injections) < ``model`` (values, commands, errors) < ``ports`` (the
contracts adapters implement) < ``truth`` (slots, validity, reconcile) < ``access`` (who may do
what where) < ``journal`` (the write path and its lanes) < ``writing`` (write-side use cases) <
``apply`` (journaled commands into the stores) < ``formation`` (memory formation) < ``recall``
(the read side) < ``usecases`` (the service wired together, start-up, operations)."""
