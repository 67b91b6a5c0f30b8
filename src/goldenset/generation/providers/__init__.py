"""The LLMs that write questions, behind the small interface of goldenset.generation.interface:
Anthropic, OpenAI-compatible servers and the bundled local GGUF model (local, local_model), the
registry that builds one from generate.provider, and SDK errors turned into clear messages."""
