"""Screening what agents send: secrets and PII redacted, injections flagged (``screening`` is the API), per-text memos, importance scores. Imports nothing else of the core."""
