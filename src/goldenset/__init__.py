"""goldenset: labelled (question -> evidence) sets from your own documents, and retriever scores on them."""

__version__ = "0.1.0"
