"""What decoding several questions in one llama.cpp batch would buy the local writer: tokens and
requests per second against sequences per batch.

Each request is the writer's own: the system prompt and few-shot turns (evaluated once and
shared: every sequence starts from a copy of their cache), then a sample passage with its target
sentence marked (evaluated per sequence), then `--generate` greedy tokens. With B sequences a
batch, B requests evaluate their passages in one llama_decode and generate one token each per
llama_decode. B = 1 is the writer as it runs today. Printed per B: requests per second, prompt
tokens per second of the passage turns, generated tokens per second, the ratio of requests per
second to B = 1's, and how many greedy answers differ from B = 1's (llama.cpp's logits move
slightly with the batch).

No steering here (the decoder's rules need a per-sequence loop in Python between steps, which
this does not add): this is the ceiling batching allows.

    PYTHONPATH=src python benchmarks/bench_sequences.py --requests 16 --sequences 1 2 4 8
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def passages(count: int) -> list[str]:
    """The first `count` sample passages of the shipped params, their first target marked."""
    from goldenset.corpus.ingest import ingest
    from goldenset.generation.params import GenerateParams
    from goldenset.generation.passages import passages_for
    from goldenset.generation.prompt import mark_target

    documents = [(d.doc_id, d.text) for d in ingest(ROOT / "data/docs", max_file_mb=20).documents]
    chosen = passages_for(documents, GenerateParams(max_questions=count))
    return [mark_target(p.text, *p.targets[0]) for p in chosen[:count]]


class Batched:
    """A llama.cpp context of `sequences` sequences over the bundled model."""

    def __init__(self, llm, sequences: int, threads: int) -> None:
        import llama_cpp

        self.lib = llama_cpp
        params = llama_cpp.llama_context_default_params()
        # the prefix and 8 passage turns with their answers; a bigger cache costs attention
        params.n_ctx = 2048
        params.n_batch = 2048
        params.n_ubatch = 512
        params.n_seq_max = sequences
        params.kv_unified = (
            True  # one cache the sequences share: the prefix is copied, not re-evaluated
        )
        params.n_threads = params.n_threads_batch = threads
        self.ctx = llama_cpp.llama_init_from_model(llm.model, params)
        self.memory = llama_cpp.llama_get_memory(self.ctx)
        self.batch = llama_cpp.llama_batch_init(2048, 0, sequences)
        self.n_vocab = llm.n_vocab()

    def decode(self, items: list[tuple[int, int, int, bool]]) -> dict[int, np.ndarray]:
        """(token, position, sequence, wants logits) each -> the logits of those that want them,
        by sequence."""
        batch = self.batch
        batch.n_tokens = len(items)
        for i, (token, position, sequence, logits) in enumerate(items):
            batch.token[i], batch.pos[i] = token, position
            batch.n_seq_id[i], batch.seq_id[i][0] = 1, sequence
            batch.logits[i] = logits
        if self.lib.llama_decode(self.ctx, batch) != 0:
            raise RuntimeError("llama_decode failed")
        out = {}
        for i, (_, _, sequence, logits) in enumerate(items):
            if logits:
                row = self.lib.llama_get_logits_ith(self.ctx, i)
                out[sequence] = np.ctypeslib.as_array(row, shape=(self.n_vocab,)).copy()
        return out

    def copy_prefix(self, sequences: int, prefix: int) -> None:
        for sequence in range(1, sequences):
            self.lib.llama_memory_seq_rm(self.memory, sequence, -1, -1)
            self.lib.llama_memory_seq_cp(self.memory, 0, sequence, 0, prefix)

    def forget_after(self, sequence: int, position: int) -> None:
        self.lib.llama_memory_seq_rm(self.memory, sequence, position, -1)

    def close(self) -> None:
        self.lib.llama_batch_free(self.batch)
        self.lib.llama_free(self.ctx)


def run(
    llm, prefix: list[int], prompts: list[list[int]], sequences: int, generate: int, threads: int
):
    """Every prompt answered `sequences` at a time: (seconds, passage tokens, answers)."""
    model = Batched(llm, sequences, threads)
    try:
        model.decode([(t, i, 0, i == len(prefix) - 1) for i, t in enumerate(prefix)])
        answers: list[list[int]] = []
        started = time.perf_counter()
        for first in range(0, len(prompts), sequences):
            group = prompts[first : first + sequences]
            model.forget_after(0, len(prefix))
            model.copy_prefix(len(group), len(prefix))
            items = [
                (token, len(prefix) + i, s, i == len(suffix) - 1)
                for s, suffix in enumerate(group)
                for i, token in enumerate(suffix)
            ]
            logits = model.decode(items)
            written: list[list[int]] = [[] for _ in group]
            for step in range(generate):
                chosen = {s: int(np.argmax(scores)) for s, scores in logits.items()}
                for s, token in chosen.items():
                    written[s].append(token)
                logits = model.decode(
                    [
                        (token, len(prefix) + len(group[s]) + step, s, True)
                        for s, token in chosen.items()
                    ]
                )
            answers.extend(written)
        seconds = time.perf_counter() - started
    finally:
        model.close()
    return seconds, sum(len(p) for p in prompts), answers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=16)
    parser.add_argument("--sequences", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--generate", type=int, default=15)  # tokens a question takes
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    from goldenset.generation.params import GenerateParams
    from goldenset.generation.prompt import SYSTEM, build_messages
    from goldenset.generation.providers.local import LocalProvider, _fixed_turns

    provider = LocalProvider(GenerateParams())
    provider.load()
    chats = [
        [{"role": "system", "content": SYSTEM}, *build_messages(p)] for p in passages(args.requests)
    ]
    fixed = provider._render(_fixed_turns(chats[0]), generation_prompt=False)
    prompts = [provider._tokenize(provider._template(messages=chat).prompt) for chat in chats]
    assert all(p[: len(fixed)] == fixed for p in prompts), "the prompts do not share the prefix"
    suffixes = [p[len(fixed) :] for p in prompts]
    print(
        f"{args.requests} requests: a shared prefix of {len(fixed)} tokens, passage turns of "
        f"{np.mean([len(s) for s in suffixes]):.0f} tokens, {args.generate} generated tokens each"
    )
    baseline = None
    print(
        f"{'sequences':>9} {'req/s':>7} {'prompt tok/s':>12} {'gen tok/s':>10} {'ratio':>6} "
        f"{'answers differ':>15}"
    )
    for sequences in args.sequences:
        seconds, prompt_tokens, answers = run(
            provider._llm, fixed, suffixes, sequences, args.generate, args.threads
        )
        if baseline is None:
            baseline = (seconds, answers)
        differ = sum(a != b for a, b in zip(answers, baseline[1], strict=True))
        print(
            f"{sequences:>9} {args.requests / seconds:>7.2f} {prompt_tokens / seconds:>12.1f} "
            f"{args.requests * args.generate / seconds:>10.1f} {baseline[0] / seconds:>6.2f}x "
            f"{differ:>8} of {args.requests}"
        )
    provider.close()


if __name__ == "__main__":
    main()
