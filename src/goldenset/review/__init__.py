"""A person's review of the golden set, and what the pipeline does with it.

verdicts   the verdict file: one line a query in the schema of labels/*.jsonl, read and written
queue      the order to review in: a seeded random sample, then what the judge is least sure of
views      what one screen shows: a query in its document, and a retriever's miss beside another's
server     `goldenset review`: the page on 127.0.0.1 and the API it calls
"""
