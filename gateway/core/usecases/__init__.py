"""The gateway's use cases wired together (``service``), start-up and background loops (``runtime``), operations, lifecycle, transfer, erasure, tasks, episodes, facts, skills, memories."""
