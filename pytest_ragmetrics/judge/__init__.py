"""The LLM judge: its configuration, prompts, HTTP client, verdicts and verdict cache."""
