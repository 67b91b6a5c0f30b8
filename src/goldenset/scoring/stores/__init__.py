"""A team's own retriever, scored as it runs: a store or framework retriever that returns its own
passages (document id, text, offsets), cut by its own chunking, with its own ids and embeddings.

Each adapter is an entry of the retriever registry (goldenset.scoring.retrievers.base.RETRIEVERS)
with ``foreign=True``, its own params section (a goldenset.scoring.stores.base.StoreSection) and
an optional extra. goldenset.scoring.foreign places its passages in their documents and scores
them over the store's own chunking.
"""
