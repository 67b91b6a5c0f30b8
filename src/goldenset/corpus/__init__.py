"""The ingest stage's logic: a folder, one file or a BEIR corpus read into documents (ingest),
from plain text and Markdown or reStructuredText with their titles (titles), HTML (html), BEIR
corpora (beir) and SQuAD articles (labelled); what it keeps and skips (documents);
near-duplicate documents (duplicates); and the query sets found beside the documents or made by
the pipeline, as tables (queries: BEIR queries and qrels, the golden set's file; labelled:
span-labelled questions)."""
