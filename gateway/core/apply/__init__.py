"""Applying journaled commands to the stores: derive memories and vectors, reconcile, statuses, erasure's store work, index fill, slot backfill, re-embedding."""
