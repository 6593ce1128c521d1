"""A weaker claim that contradicts an active fact is held for the master: its review item."""

from __future__ import annotations

from gateway.core.model.control import ReviewItem
from gateway.core.model.models import Memory
from gateway.core.truth import validity as vd


def conflict_item(claim: Memory, holder: Memory) -> ReviewItem:
    """Approving the item supersedes the fact; rejecting it forgets the claim."""
    slot = claim.metadata.get(vd.SLOT_KEY, "")
    return ReviewItem(
        claim.id,
        claim.namespace,
        f"conflict on {slot}: {claim.content[:200]!r} (confidence {claim.confidence:.2f}) "
        f"contradicts active {holder.id} {holder.content[:200]!r} (confidence "
        f"{holder.confidence:.2f}); approve to supersede it, reject to drop the claim",
    )
