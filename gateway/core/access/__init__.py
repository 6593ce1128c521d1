"""Who may do what where: namespace permissions and shared-write policy, task ownership, session-state limits."""
