"""The audit stage's logic (checks): does the golden set read like real queries? Echo of the
document, look-up questions, near-duplicates, coverage and the chance levels of its views."""
