"""The domain's values: memories, events, turns (``models``), journal commands and their codec, control records (proposals, review items, audit), candidates, errors, applied events."""
