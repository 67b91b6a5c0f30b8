"""The retrievers named in params.yaml `retrievers:`, each ranking the items of a query set, one
module each, next to its params section and its registry entry:

- dense: exact inner-product search over the embeddings;
- lexical: bm25, bm25s over the chunk texts;
- ann: a faiss HNSW or IVF index over the same embeddings, with its recall loss against dense;
- external: a team's own retriever, as a Python callable or a TREC run file;
- fusion: hybrid, reciprocal rank fusion of the runs of other retrievers (runs to a run).

Every retriever takes the same thing, a query set's questions (:class:`Queries`: ids, texts,
vectors) and a depth, and returns the same thing, a run keyed by id (:class:`Run`: chunk ids, or
document ids for a run file of documents; on disk, a TREC run file), so scoring and exports
never depend on how a run was made. It never sees judgments: the evaluator reads its ids as the
items a set is judged over (goldenset.evaluation.projection), chunks for a set judged by evidence
(the golden set) and documents, each at its best chunk, for one judged per document (real
queries). The stores (goldenset.retrieval.stores) register here too: their runs are over their
own chunking.

Adding a retriever is one module (its params section, its class and
``RETRIEVERS.register("name", RetrieverEntry(...))``), in this package or in a plugin's package
(a ``goldenset.retrievers`` entry point, goldenset.core.registry), and its section in
params.yaml. goldenset.retrieval.params derives the `retrievers:` sections from
:data:`RETRIEVERS`, which imports this package's modules and the plugins when first read.
"""

from __future__ import annotations

from goldenset.retrieval.retrievers.base import (
    RETRIEVERS,
    Fusion,
    FusionSection,
    PassagesSection,
    Retriever,
    RetrieverEntry,
    RetrieverSection,
    build_references,
    build_retrievers,
    fusable,
    fused_sections,
    fusions,
    load_retrievers,
    model_free,
    rank_all,
    ranking_order,
    stores,
)
from goldenset.retrieval.run import Corpus, Queries, Run

__all__ = [
    "RETRIEVERS",
    "Corpus",
    "Fusion",
    "FusionSection",
    "PassagesSection",
    "Queries",
    "Retriever",
    "RetrieverEntry",
    "RetrieverSection",
    "Run",
    "build_references",
    "build_retrievers",
    "fusable",
    "fused_sections",
    "fusions",
    "load_retrievers",
    "model_free",
    "rank_all",
    "ranking_order",
    "stores",
]
