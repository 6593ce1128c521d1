"""What is true now (seed 000 §2.3, §5.3; 002 §3.1): every semantic fact's slot (who or what it
is about + attribute) and value, English and Chinese in one vocabulary (``vocabulary``, parsed by
``slots``); the validity of versions over time (``validity``); how a new memory meets the stored
one on its fact (``reconcile``); conflicts for review; slots for facts that have none
(``backfill``)."""
