"""The LLMs that write questions, one module (or package) each, behind the small interface of
goldenset.generation.interface: anthropic (with its Message Batches path), openai (any
OpenAI-compatible server) and local (the bundled GGUF model, local_model). Each declares its
entry in registry.PROVIDERS, found by pkgutil when a name is first looked up; sdk_errors turns
SDK errors into clear messages."""
