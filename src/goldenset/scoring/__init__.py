"""The score stage's logic. configuration reads the pipeline's files once, scores one
configuration (every enabled retriever on every query set) and writes the stage's outputs;
ranked scores one retriever on one query set (its rankings measured by goldenset.metrics:
relevance, views, measures, chance). The retrievers package holds the built-in retrievers, a
module each, the exact ones over the top-k engine in topk; stores holds the adapters of a
team's own store, whose passages locate places in their documents and foreign turns into the
chunking it is scored over; query_cache keeps the answers of a retriever outside the pipeline.
outputs, exports and reports write the metrics files, the TREC and BEIR exports and the
worst-misses report; tokens counts the context budget's tokens with one fixed tokenizer; params
and retriever_params are the params.yaml sections `score:` and `retrievers:`."""
