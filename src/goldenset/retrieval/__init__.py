"""Making runs, as in BEIR and ranx: a retriever is given a query set's questions and a depth and
returns a run keyed by id; it never sees a judgment (those meet its run in goldenset.evaluation).

- run: the Corpus a retriever searches, the Queries it is given, the Run it returns;
- retrievers: the interface, the registry and a module per built-in retriever (dense, bm25,
  tfidf, ann, hybrid, external); params derives params.yaml's `retrievers:` from the registry;
- stores: the adapters that ask a team's store (chroma, qdrant, postgres, langchain,
  llamaindex); locate places a store's passage in its document;
- team_code: the one door for a team's own module:function; query_cache keeps its answers;
- trec: a run as a TREC run file, written for other tools and read back as a team's run.
"""
