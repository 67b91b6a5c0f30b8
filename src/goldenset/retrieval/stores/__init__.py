"""A team's own retriever, scored as it runs: a store or framework retriever that returns its own
passages (document id, text, offsets), cut by its own chunking, with its own ids and embeddings.

A store is a way of asking a server, not a second kind of retriever: each adapter is an entry of
the retriever registry (goldenset.retrieval.retrievers.base.RETRIEVERS) whose params section is a
goldenset.retrieval.stores.base.StoreSection, with an optional extra.
goldenset.scoring.store_chunking places its passages in their documents: its run is over that
chunking of its own.
"""
