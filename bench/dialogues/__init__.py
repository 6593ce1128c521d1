"""Long multi-session dialogues for recall benchmarks (see ``generate.py``)."""
