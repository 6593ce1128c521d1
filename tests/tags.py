"""Fresh names for test data (namespaces, ids, words in a memory), unique per draw and never
mistaken by the screens for something else: consonants only, so a draw is never all digits (a
passport or a phone number to the PII screen), never a word, never a secret's shape. A random
hex tag failed ~2% of runs this way ("passport number 41012748")."""

from __future__ import annotations

import secrets

ALPHABET = "bcdfghjkmnpqrstvwxz"


def fresh_tag(n: int = 8) -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(n))
