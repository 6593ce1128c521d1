"""Memory formation adapters: the rule-based and the LLM extractor, the extractive and the LLM
summariser, and the OpenAI-compatible chat-completions client they share."""
