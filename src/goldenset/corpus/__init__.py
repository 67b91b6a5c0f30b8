"""The ingest stage's logic: documents read from files, HTML, BEIR and SQuAD collections (ingest),
near-duplicate documents found (duplicates), and the query sets found beside them or produced by
the pipeline, as tables (queries: BEIR queries and qrels, the golden set's file; labelled:
span-labelled questions)."""
