"""The LLM judge: configuration, prompts, the client and its verdict cache."""
