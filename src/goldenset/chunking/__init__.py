"""The chunk stage's logic: the chunking under test (strategies: none, chars, tokens, sentences,
paragraphs, markdown), cut over the spans of goldenset.core.spans. Nothing in question generation
imports it, so a chunking change never re-runs generate."""
