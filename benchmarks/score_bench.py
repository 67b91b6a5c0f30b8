"""Scoring speed and memory: our blocked top-k + metrics against a per-question argsort loop.

Issue target, at 100,000 chunks x 10,000 questions x 384 dimensions (random unit vectors, one
relevant chunk per question), all in one process:
- at least 20x faster than the loop `scores = chunks @ q; order = np.argsort(-scores)` per
  question (timed on a sample of questions, extrapolated to all of them);
- within 1.5x of one bare matrix multiply of the same shapes (the faster of numpy and torch);
- peak memory under 2 GiB.

Memory is the process's peak resident set (VmHWM, reset just before our scoring through
/proc/self/clear_refs), so it counts the interpreter, numpy/torch and the input vectors too;
the table also shows the increase over the resident set before scoring. Our scoring runs
before the bare multiply, whose 4 GB result would otherwise own the peak.

Run: PYTHONPATH=src python benchmarks/score_bench.py [--chunks N --questions N --dim N]
(the script puts the repository's root on sys.path itself, for tests.support's metric means)

With --project DIR it times instead what the score stage runs on that project's pipeline files
(goldenset.scoring.configuration: read_score_inputs, then score_inputs, every enabled retriever
on every query set, nothing written), the functions the stage and `goldenset calibrate` call.

With --baseline REV it times the scoring the stage runs, a retriever's run then the one
evaluator (dense's rank, its run read as the set's items, then
goldenset.evaluation.evaluator.score_ranked: every metric and the result rows), on the same data
with REV's code and this checkout's, taking turns --repeat times in this one process, and prints the
ratio (target: within 1.1x of the baseline); --documents judges the set per document instead
(documents of 1 to 40 chunks), where each code fetches what its evaluation asks for:

    PYTHONPATH=src python benchmarks/score_bench.py --baseline 54e878b --repeat 3
    PYTHONPATH=src python benchmarks/score_bench.py --baseline 5d9dabd --repeat 3 --documents
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import inspect
import os
import resource
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import torch
from scipy import sparse

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, for tests.support

from goldenset.core.topk import block_rows_for, top_k  # noqa: E402
from goldenset.evaluation.ranking import evaluate  # noqa: E402
from goldenset.retrieval.retrievers.dense import DenseScores  # noqa: E402
from tests.support.metrics import mean_metrics  # noqa: E402

GIB = 2**30
TARGET_LOOP_SPEEDUP = 20.0
TARGET_MATMUL_RATIO = 1.5
TARGET_PEAK_BYTES = 2 * GIB


def unit_rows(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    vectors = rng.standard_normal((n, dim), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors


def make_data(n_chunks: int, n_questions: int, dim: int, seed: int):
    """Random unit chunks; each question leans towards its one relevant chunk, so ranks vary."""
    rng = np.random.default_rng(seed)
    chunks = unit_rows(rng, n_chunks, dim)
    relevant = rng.integers(0, n_chunks, n_questions)
    questions = unit_rows(rng, n_questions, dim)
    for start in range(0, n_questions, 4096):  # in slices, to keep the setup's peak small
        part = slice(start, start + 4096)
        questions[part] += 0.25 * chunks[relevant[part]]
    questions /= np.linalg.norm(questions, axis=1, keepdims=True)
    return chunks, questions, relevant


def memory_status() -> dict[str, int]:
    """VmRSS and VmHWM of this process, in bytes."""
    values = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        name, _, rest = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            values[name] = int(rest.split()[0]) * 1024
    return values


def reset_peak() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def our_scoring(chunks, questions, relevant, k, ks):
    qrels = sparse.csr_array(
        (np.ones(len(relevant)), (np.arange(len(relevant)), relevant)),
        shape=(len(questions), len(chunks)),
    )
    best = top_k(DenseScores(questions, chunks), k)
    per_query = evaluate(best.indices, qrels, ks)
    return per_query, mean_metrics(per_query)


def article_loop(chunks, questions, relevant) -> np.ndarray:
    ranks = np.empty(len(questions), dtype=np.int64)
    for row, question in enumerate(questions):
        scores = chunks @ question
        order = np.argsort(-scores)
        ranks[row] = np.flatnonzero(order == relevant[row])[0] + 1
    return ranks


def timed(function, *args):
    """(wall seconds, process CPU seconds, result)."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = function(*args)
    return time.perf_counter() - wall, time.process_time() - cpu, result


def bare_numpy(questions, chunks) -> tuple[float, float]:
    wall, cpu, scores = timed(np.matmul, questions, chunks.T)
    del scores
    return wall, cpu


def bare_torch(questions, chunks) -> tuple[float, float]:
    wall, cpu, scores = timed(torch.mm, torch.from_numpy(questions), torch.from_numpy(chunks).T)
    del scores
    return wall, cpu


def verdict(passed: bool) -> str:
    return "PASS" if passed else "FAIL"


def best(runs: list[tuple[float, float]]) -> tuple[float, float]:
    """The run with the least wall time: the one least disturbed by other processes."""
    return min(runs)


def measure(args, chunks, questions, relevant, ks) -> dict:
    """Every timing, best of --repeat rounds; each round runs the four in the same order."""
    sample = min(args.loop_sample, args.questions)
    times: dict[str, list[tuple[float, float]]] = {"ours": [], "loop": [], "numpy": [], "torch": []}
    peak, rss_before = 0, 0
    for _ in range(args.repeat):
        rss_before = memory_status()["VmRSS"]
        peak_was_reset = reset_peak()
        wall, cpu, (per_query, means) = timed(our_scoring, chunks, questions, relevant, args.k, ks)
        times["ours"].append((wall, cpu))
        if peak_was_reset:
            peak = max(peak, memory_status()["VmHWM"])
        else:  # the whole life of the process, setup included
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        wall, cpu, ranks = timed(article_loop, chunks, questions[:sample], relevant[:sample])
        scale = args.questions / sample
        times["loop"].append((wall * scale, cpu * scale))
        times["numpy"].append(bare_numpy(questions, chunks))
        times["torch"].append(bare_torch(questions, chunks))
    # Cross-check: the loop's ranks give the same reciprocal ranks (0 beyond k) as ours.
    loop_rr = np.where(ranks <= args.k, 1.0 / ranks, 0.0)
    agree = int(np.sum(np.isclose(loop_rr, per_query["mrr"][:sample])))
    return {
        "times": {name: best(runs) for name, runs in times.items()},
        "peak": peak,
        "peak_was_reset": peak_was_reset,
        "rss_before": rss_before,
        "means": means,
        "agree": agree,
        "sample": sample,
    }


def report(result: dict) -> None:
    times = result["times"]
    ours, loop = times["ours"][0], times["loop"][0]
    bare = min(times["numpy"][0], times["torch"][0])
    peak = result["peak"]
    means = result["means"]
    print("ours, all questions: " + ", ".join(f"{n}={v:.4f}" for n, v in means.items()))
    print(f"reciprocal ranks equal to the loop's on {result['agree']}/{result['sample']} questions")
    print()
    rows = [
        ("our scoring (top-k + metrics)", times["ours"], "", ""),
        (
            f"argsort loop ({result['sample']} q, extrapolated)",
            times["loop"],
            f"{loop / ours:6.1f}x faster",
            f">= {TARGET_LOOP_SPEEDUP:.0f}x  " + verdict(loop / ours >= TARGET_LOOP_SPEEDUP),
        ),
        ("bare multiply, numpy", times["numpy"], f"{ours / times['numpy'][0]:6.2f}x of it", ""),
        ("bare multiply, torch", times["torch"], f"{ours / times['torch'][0]:6.2f}x of it", ""),
        (
            "ours vs the faster bare multiply",
            None,
            f"{ours / bare:6.2f}x",
            f"<= {TARGET_MATMUL_RATIO}x  " + verdict(ours / bare <= TARGET_MATMUL_RATIO),
        ),
    ]
    print(f"{'measure':<40} {'wall s':>8} {'CPU s':>8}  {'ratio (wall)':<15} target")
    for name, seconds, ratio, target in rows:
        wall, cpu = (f"{seconds[0]:8.2f}", f"{seconds[1]:8.2f}") if seconds else ("", "")
        print(f"{name:<40} {wall:>8} {cpu:>8}  {ratio:<15} {target}")
    print(
        f"{'peak RSS of the process, our scoring':<40} {peak / GIB:8.2f} GiB{'':11}"
        f"< 2 GiB  {verdict(peak < TARGET_PEAK_BYTES)}"
    )
    print(f"{'  of which added by our scoring':<40} {(peak - result['rss_before']) / GIB:8.2f} GiB")
    if not result["peak_was_reset"]:
        print("(peak from ru_maxrss: /proc/self/clear_refs was not writable; it includes setup)")


# where each interface the timing uses lives: since retrieval/ and evaluation/ were split out of
# scoring/, and before (an interface a revision does not have yet is None)
LAYOUTS = {
    "split": {
        "Qrels": ("goldenset.evaluation.qrels", "Qrels"),
        "score_ranked": ("goldenset.evaluation.evaluator", "score_ranked"),
        "RunItems": ("goldenset.evaluation.projection", "RunItems"),
        "Dense": ("goldenset.retrieval.retrievers.dense", "Dense"),
        "Corpus": ("goldenset.retrieval.run", "Corpus"),
        "Queries": ("goldenset.retrieval.run", "Queries"),
        "Cover": ("goldenset.core.cover", "Cover"),
    },
    "scoring": {
        "Qrels": ("goldenset.scoring.ranked", "ItemJudgments"),
        "score_ranked": ("goldenset.scoring.ranked", "score_ranked"),
        "RunItems": ("goldenset.scoring.projection", "RunItems"),
        "Dense": ("goldenset.scoring.retrievers.dense", "Dense"),
        "Corpus": ("goldenset.scoring.retrievers", "Corpus"),
        "Queries": ("goldenset.scoring.retrievers", "Queries"),
        "Cover": ("goldenset.scoring.cover", "Cover"),
    },
}


def stage_api() -> SimpleNamespace:
    """The score stage's interfaces from whichever source folder `import goldenset` loads now
    (benchmarks/baseline.py), in its layout (LAYOUTS)."""
    split = importlib.util.find_spec("goldenset.evaluation") is not None
    api = {}
    for name, (module, attribute) in LAYOUTS["split" if split else "scoring"].items():
        try:
            api[name] = getattr(importlib.import_module(module), attribute)
        except (ImportError, AttributeError):
            api[name] = None
    # a run keyed by id, read as the set's items (RunItems); runs that cover documents (Cover)
    return SimpleNamespace(
        **api, run_by_id=api["RunItems"] is not None, covering=api["Cover"] is not None
    )


def stage_scoring(chunks, questions, relevant, k, ks, item_ids, doc_sizes=None) -> dict[str, float]:
    """A dense run and its evaluation through the score stage's own interfaces (stage_api). With
    ``doc_sizes`` (each document's chunk count, chunks in document order) the set is judged per
    document, each question's relevant chunk's document relevant: the run fetches what the
    evaluation asks of that code for ``k`` documents (``k x`` the largest document's chunks
    before goldenset.core.cover, ``k`` documents and texts since)."""
    api = stage_api()
    qids = [f"q{row}" for row in range(len(questions))]
    texts = [""] * len(qids)
    if doc_sizes is not None:
        return _per_document(api, chunks, questions, relevant, k, ks, item_ids, doc_sizes)
    qrels = sparse.csr_array(
        (np.ones(len(relevant)), (np.arange(len(relevant)), relevant)),
        shape=(len(questions), len(chunks)),
    )
    judged = api.Qrels("synthetic", qids, qrels, item_ids)
    dense = api.Dense(api.Corpus(item_ids, item_ids, chunks), "cpu")
    if api.run_by_id:
        n_items = len(item_ids)
        items = api.RunItems("synthetic", qids, list(item_ids), np.arange(n_items), n_items)
        run = dense.rank(api.Queries("synthetic", qids, texts, questions), k)
        found = items.project(run, k, "dense")
    else:  # before: rank() was handed the judgments, and (earlier still) the earlier lists
        earlier = ({},) if "earlier" in inspect.signature(dense.rank).parameters else ()
        found = dense.rank(api.Queries(judged, texts, questions), k, *earlier)
    headline = [f"ndcg@{min(10, k)}", f"recall@{k}"]
    metrics, _ = api.score_ranked(judged, "dense", found, ks, headline)
    return metrics


def _per_document(api, chunks, questions, relevant, k, ks, item_ids, doc_sizes) -> dict[str, float]:
    """stage_scoring's document-judged case (code since the run keyed by id)."""
    qids = [f"q{row}" for row in range(len(questions))]
    doc_of = np.repeat(np.arange(len(doc_sizes)), doc_sizes)
    doc_ids = [f"d{doc}" for doc in range(len(doc_sizes))]
    qrels = sparse.csr_array(
        (np.ones(len(relevant)), (np.arange(len(relevant)), doc_of[relevant])),
        shape=(len(questions), len(doc_sizes)),
    )
    judged = api.Qrels("real", qids, qrels, doc_ids)
    if api.covering:
        corpus = api.Corpus(item_ids, item_ids, chunks, [doc_ids[d] for d in doc_of])
    else:
        corpus = api.Corpus(item_ids, item_ids, chunks)
    fetched = k if api.covering else k * int(max(doc_sizes))
    items = api.RunItems("real", qids, list(item_ids), doc_of, len(doc_sizes), doc_ids)
    queries = api.Queries("real", qids, [""] * len(qids), questions)
    found = items.project(api.Dense(corpus, "cpu").rank(queries, fetched), k, "dense")
    headline = [f"ndcg@{min(10, k)}", f"recall@{k}"]
    metrics, _ = api.score_ranked(judged, "dense", found, ks, headline)
    return metrics


def against_baseline(args, chunks, questions, relevant, ks) -> None:
    """This checkout's scoring against REV's, taking turns, best of --repeat rounds each."""
    import tempfile

    from baseline import ROOT, extract, use_source

    item_ids = [f"c{row}" for row in range(len(chunks))]
    doc_sizes = document_sizes(len(chunks), args.seed) if args.documents else None
    if doc_sizes is not None:
        print(f"judged per document: {len(doc_sizes):,} documents of 1 to {doc_sizes.max()} chunks")
    with tempfile.TemporaryDirectory() as tmp:
        trees = {args.baseline: extract(args.baseline, Path(tmp)) / "src", "this": ROOT / "src"}
        times: dict[str, list[tuple[float, float]]] = {label: [] for label in trees}
        means: dict[str, dict[str, float]] = {}
        for round_ in range(args.repeat + 1):  # round 0 warms each tree up, untimed
            for label, src in trees.items():
                use_source(src)
                part = slice(None) if round_ else slice(0, 64)
                scored = (chunks, questions[part], relevant[part], args.k, ks, item_ids, doc_sizes)
                wall, cpu, means[label] = timed(stage_scoring, *scored)
                if round_:
                    times[label].append((wall, cpu))
    print(f"{'code':<24} {'wall s':>8} {'CPU s':>8}")
    for label in trees:
        wall, cpu = best(times[label])
        print(f"{label:<24} {wall:8.2f} {cpu:8.2f}")
    ratio = best(times["this"])[0] / best(times[args.baseline])[0]
    print(f"this / {args.baseline}: {ratio:.3f}x (<= 1.1x  {verdict(ratio <= 1.1)})")
    old, new = means[args.baseline], means["this"]
    same = old.keys() == new.keys() and all(
        np.array_equal(old[name], new[name], equal_nan=True) for name in old
    )
    print(f"every metric equal to the baseline's: {same}")


def document_sizes(n_chunks: int, seed: int) -> np.ndarray:
    """Documents of 1 to 40 chunks (4 on average, a long tail), holding the n_chunks in order."""
    rng = np.random.default_rng(seed)
    sizes = np.minimum(rng.geometric(0.25, n_chunks), 40)
    cut = int(np.searchsorted(np.cumsum(sizes), n_chunks))
    sizes = sizes[: cut + 1]
    sizes[-1] -= int(sizes.sum()) - n_chunks
    return sizes[sizes > 0]


def time_configuration(project: Path) -> None:
    """The score stage's computation on a project's files, timed: one configuration (the golden
    set's questions people failed left out, as the stage leaves them out)."""
    from goldenset.params import load_params
    from goldenset.scoring.configuration import read_score_inputs, score_inputs

    params = load_params(project / "params.yaml")
    wall, cpu, (inputs, _) = timed(
        read_score_inputs, params.score, params.retrievers, params.review, project
    )
    print(f"{project}: inputs read in {wall:.2f} s ({cpu:.2f} s CPU)")
    wall, cpu, outputs = timed(score_inputs, inputs, params.score, params.retrievers)
    print(
        f"{project}: scored {len(outputs.results):,} result rows in {wall:.2f} s ({cpu:.2f} s CPU)"
    )
    for query_set, retrievers in outputs.scores.items():
        for retriever, values in retrievers.items():
            shown = ", ".join(f"{name} {value:.4f}" for name, value in values.items())
            print(f"  {query_set}.{retriever}: {shown}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--questions", type=int, default=10_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--k", type=int, default=100, help="results kept per question")
    parser.add_argument("--loop-sample", type=int, default=300, help="questions timed in the loop")
    parser.add_argument("--repeat", type=int, default=1, help="rounds; the best of each is shown")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--project", type=Path, help="time the score stage's work on a project")
    parser.add_argument("--baseline", help="a revision: its scoring against this checkout's")
    parser.add_argument(
        "--documents", action="store_true", help="with --baseline: a set judged per document"
    )
    args = parser.parse_args()
    if args.project:
        time_configuration(args.project)
        return
    ks = sorted({k for k in (1, 3, 5, 10, args.k) if k <= args.k})
    if args.baseline:
        data = make_data(args.chunks, args.questions, args.dim, args.seed)
        against_baseline(args, *data, ks)
        return

    print(
        f"{args.chunks:,} chunks x {args.questions:,} questions x {args.dim} dims, k={args.k}; "
        f"{os.cpu_count()} CPUs, torch threads {torch.get_num_threads()}, "
        f"block {block_rows_for(args.chunks)} rows; load average {os.getloadavg()[0]:.2f}"
    )
    chunks, questions, relevant = make_data(args.chunks, args.questions, args.dim, args.seed)
    # Warm up thread pools and code paths on a few questions, outside the measurement.
    our_scoring(chunks, questions[:64], relevant[:64], args.k, ks)
    report(measure(args, chunks, questions, relevant, ks))
    print(f"load average at the end {os.getloadavg()[0]:.2f} (other processes skew wall times)")


if __name__ == "__main__":
    main()
