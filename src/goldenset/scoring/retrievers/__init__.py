"""The retrievers named in params.yaml `retrievers:`, each ranking the items of a query set, one
module each, next to its params section and its registry entry:

- dense: exact inner-product search over the embeddings;
- lexical: bm25, bm25s over the chunk texts;
- ann: a faiss HNSW or IVF index over the same embeddings, with its recall loss against dense;
- external: a team's own retriever, as a Python callable or a TREC run file;
- fusion: hybrid, reciprocal rank fusion of the ranked lists of other retrievers.

Every retriever returns the same thing, ranked lists (:class:`~goldenset.scoring.topk.TopK`: item
indices best first, -1 padding a short list), so scoring and exports never depend on how a
list was made. Items are chunks for a query set judged per chunk (the golden set) and documents
for one judged per document (real queries): a document ranks by its best chunk
(``QuerySet.groups``).

Adding a retriever is one module in this package (its params section, its class and
``REGISTRY["name"] = RetrieverEntry(...)``) and its section in params.yaml: importing the package
imports every module in it. goldenset.scoring.retriever_params derives the `retrievers:` sections
when it is imported, so an entry added from outside (a plugin, a test's toy) is added before that.
"""

from __future__ import annotations

import importlib
import pkgutil

from goldenset.scoring.retrievers.base import (
    REGISTRY,
    Corpus,
    Queries,
    RankingContext,
    Retriever,
    RetrieverEntry,
    RetrieverSection,
    build_retrievers,
    exact_search,
    fusable,
    fused_sections,
    model_free,
    rank_all,
    ranking_order,
    registered,
)

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
_ordered = registered()
REGISTRY.clear()
REGISTRY.update(_ordered)

__all__ = [
    "REGISTRY",
    "Corpus",
    "Queries",
    "RankingContext",
    "Retriever",
    "RetrieverEntry",
    "RetrieverSection",
    "build_retrievers",
    "exact_search",
    "fusable",
    "fused_sections",
    "model_free",
    "rank_all",
    "ranking_order",
    "registered",
]
