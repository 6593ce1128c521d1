"""A sub-agent: works on a batch task, keeps private notes, records what happened, and proposes
what it learned about the user to the master (it cannot write shared memory directly)."""

from __future__ import annotations

from gateway.client import GatewayClient


class ResearchAgent:
    def __init__(self, target: str, agent_id: str) -> None:
        self.client = GatewayClient(target, agent_id=agent_id)
        self.agent_id = agent_id

    def close(self) -> None:
        self.client.close()

    def research(self, task_id: str, user_namespace: str) -> str:
        private = f"agent/{self.agent_id}"
        self.client.write(
            private,
            "semantic",
            "Restaurant APIs rate-limit at 10 requests/s",
            type="note",
            task_id=task_id,
        )
        self.client.record_event(
            f"task/{task_id}",
            "Compared 3 dinner places near the office",
            task_id=task_id,
            entities=["dinner"],
            wait=True,
        )
        proposal = self.client.write_result(
            user_namespace,
            "semantic",
            "Alice orders dinner around 19:00",
            confidence=0.6,
            task_id=task_id,
        )
        return (
            f"researcher: noted privately, recorded the event in task/{task_id}, "
            f"proposed a shared fact (proposal {proposal.proposal_id[:8]}…, awaiting the master)"
        )
