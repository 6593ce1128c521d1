"""Memory formation: the formation policy, its jobs on the formation lane, observations, model summaries of overflow."""
