"""llamaindex: a team's LlamaIndex retriever (any llama_index.core ``BaseRetriever``: an index's
``as_retriever()``, a fusion or auto-merging retriever), built by the team's own
``module:function`` and scored with its own chunks.

Each result is a ``NodeWithScore``: its node's text, its score, ``node.node_id`` as its chunk id
and ``node.start_char_idx`` / ``end_char_idx`` (what LlamaIndex's node parsers set) as its
offsets. Its document id is ``node.metadata[doc_id_key]`` when the node has that key, else
``node.ref_doc_id`` (the id of the Document it was parsed from): metadata wins, so a team whose
Documents carry generated ids names the corpus's ids in their metadata.
"""

from __future__ import annotations

from typing import Any

from goldenset.core.errors import GoldensetError
from goldenset.retrieval.retrievers.base import RETRIEVERS
from goldenset.retrieval.stores.base import Hit, required, store_entry
from goldenset.retrieval.stores.callable import CallableSection, user_object, user_retriever


class LlamaIndexParams(CallableSection):
    """retrievers.llamaindex: the fields of every store a team's callable builds."""


class LlamaIndexStore:
    """A LlamaIndex retriever, asked one question at a time (``retriever.retrieve``)."""

    name = "llamaindex"

    def __init__(self, settings: LlamaIndexParams, retriever: Any) -> None:
        self.settings, self.retriever = settings, retriever
        self.described = f"LlamaIndex {type(retriever).__name__} of {settings.callable}"

    def search(self, texts: list[str], k: int) -> list[list[Hit]]:
        # an index's retriever returns similarity_top_k nodes (2 unless set): ask for k; any
        # other retriever returns what it was built to return
        if isinstance(getattr(self.retriever, "similarity_top_k", None), int):
            self.retriever.similarity_top_k = k
        return [
            [self._hit(result) for result in self.retriever.retrieve(text)[:k]] for text in texts
        ]

    def chunks(self) -> list[Hit] | None:
        if self.settings.chunks is None:
            return None
        listed = user_object(self.name, "chunks", self.settings.chunks, self.settings.folder)
        return [self._hit(node) for node in listed]

    def _hit(self, given: Any) -> Hit:
        """A NodeWithScore (a result) or a bare node (a listed chunk)."""
        from llama_index.core.schema import BaseNode, MetadataMode, NodeWithScore

        node, score = (
            (given.node, given.score) if isinstance(given, NodeWithScore) else (given, None)
        )
        if not isinstance(node, BaseNode):
            raise GoldensetError(
                f"retrievers.{self.name}: {self.described} gave a {type(node).__name__}, "
                "not a llama_index node"
            )
        return Hit(
            self._doc_id(node),
            node.get_content(metadata_mode=MetadataMode.NONE),
            node.start_char_idx,
            node.end_char_idx,
            None if score is None else float(score),
            node.node_id,
        )

    def _doc_id(self, node: Any) -> str:
        key = self.settings.doc_id_key
        if node.metadata.get(key) is None and node.ref_doc_id is not None:
            return str(node.ref_doc_id)
        return required(node.metadata, key, self.name, self.described)


def open_llamaindex(settings: LlamaIndexParams) -> LlamaIndexStore:
    """The team's retriever, built by its callable."""
    module = "llama_index.core.retrievers"
    retriever = user_retriever("llamaindex", settings, module, "llamaindex", "LlamaIndex")
    return LlamaIndexStore(settings, retriever)


RETRIEVERS.register("llamaindex", store_entry(LlamaIndexParams, open_llamaindex, "llamaindex"))
