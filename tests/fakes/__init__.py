"""In-memory fakes of the core's ports for unit tests, each proven by the port's contract suite
(``tests/contract/``) to behave as the adapters do. Where a port has an embedded adapter that is
cheap to open (the SQLite journal and record store), unit tests use that instead."""
