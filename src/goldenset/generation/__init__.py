"""The generate stage's logic: passages sampled from the documents (passages), a prompt per
passage (prompt), a session that asks through the answer cache (session, cache) now or in a
batch (the provider's batch path), answers checked against the rules a question must obey
(validation), kept rows and reject rows (records, dedupe), the run's price and budget (pricing)
and its summary lines (summary); runner ties them together. The LLMs themselves are in
providers/, one module (or package) each, found by providers/registry.py."""
