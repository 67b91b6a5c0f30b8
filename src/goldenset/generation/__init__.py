"""Question generation: prompts, LLM providers, validation of answers, and the answer cache."""
