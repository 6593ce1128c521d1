"""The master agent: talks to the user, keeps the session window, remembers what matters,
recalls across sessions, and decides sub-agents' proposals."""

from __future__ import annotations

from agents_demo.access import Access
from gateway.client import Hit

REMEMBER_WORDS = ("记住", "remember", "don't forget", "别忘了")


class MasterAgent:
    def __init__(self, access: Access, user_namespace: str, agent_id: str = "master") -> None:
        self.client = access.client(agent_id)
        self.user_ns = user_namespace

    def close(self) -> None:
        self.client.close()

    def user_says(self, session: str, text: str, note: str = "") -> None:
        """One user turn: it goes into the session window; what the user asked to remember is
        also written to their long-term semantic memory — as the master's note in the third
        person (``note``), the user's words as its evidence (the gateway's own formation then
        meets the same fact, and merges it instead of storing it twice)."""
        self.client.append_turn(self.user_ns, session, role="user", content=text)
        if any(w in text.lower() for w in REMEMBER_WORDS):
            self.client.write(
                self.user_ns,
                "semantic",
                note or text,
                type="preference",
                session_id=session,
                evidence=[text],
                wait=True,
            )
        self.client.append_turn(self.user_ns, session, role="assistant", content="(answer)")

    def end_session(self, session: str):  # type: ignore[no-untyped-def]
        """The conversation is over: the gateway mines it for facts (no propose_fact here)."""
        return self.client.end_session(self.user_ns, session, wait=True)

    def formed_facts(self) -> list:  # type: ignore[type-arg]
        """Semantic memories the gateway formed on its own, per its audit log."""
        ids = {
            e.target
            for e in self.client.audit(agent_id="memgate.formation", namespace=self.user_ns)
            if e.action == "form"
        }
        return [self.client.get(i) for i in sorted(ids)]

    def window(self, session: str):  # type: ignore[no-untyped-def]
        return self.client.window(self.user_ns, session)

    def recommend_takeout(self, session: str) -> tuple[str, list[Hit]]:
        ask = "Recommend a takeout dinner for tonight. 推荐一份外卖"
        self.client.append_turn(self.user_ns, session, role="user", content=ask)
        recall = self.client.recall(
            "what food does the user like or not eat? 用户不吃什么",
            namespaces=[self.user_ns, "global"],
            top_k=5,
            session_id=session,
        )
        avoid_cilantro = any("香菜" in h.content or "cilantro" in h.content.lower() for h in recall)
        if avoid_cilantro:
            answer = (
                "Try the Sichuan noodle place — I'll ask them to leave out the cilantro (不放香菜)."
            )
        else:
            answer = "Try the Yunnan rice-noodle shop — their cilantro topping is famous!"
        self.client.append_turn(self.user_ns, session, role="assistant", content=answer)
        return answer, list(recall)
