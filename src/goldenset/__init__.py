"""goldenset: labelled (question -> evidence) sets from your documents, and retriever scores."""

__version__ = "0.1.0"
