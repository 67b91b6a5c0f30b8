"""Answer cache, question ids, prices and the budget: the parts that make generation pay once."""

from __future__ import annotations

import gzip
import json
import threading

import pytest

from goldenset.core.errors import GoldensetError
from goldenset.generation.cache import MERGE_FANOUT, AnswerCache, answer_key
from goldenset.generation.interface import Completion
from goldenset.generation.params import Price
from goldenset.generation.passages import Passage
from goldenset.generation.pricing import Budget, cost_usd, price_for
from goldenset.generation.records import make_qid

IDENTITY = {"provider": "anthropic", "model": "claude-haiku-4-5", "max_tokens": 400}
MESSAGES = [{"role": "user", "content": "<passage>\nText.\n</passage>"}]


def key(**changes):
    settings = dict(identity=IDENTITY, prompt_sha="p1", system="S", messages=MESSAGES)
    settings.update(changes)
    index = settings.pop("question_index", 0)
    attempt = settings.pop("attempt", 0)
    return answer_key(**settings, question_index=index, attempt=attempt)


def test_key_changes_with_everything_that_shapes_the_answer():
    base = key()
    variants = [
        key(identity={**IDENTITY, "model": "claude-sonnet-4-5"}),
        key(identity={**IDENTITY, "max_tokens": 800}),
        key(prompt_sha="p2"),
        key(system="S2"),
        key(messages=[{"role": "user", "content": "<passage>\nOther.\n</passage>"}]),
        key(question_index=1),
        key(attempt=1),
    ]
    assert len({base, *variants}) == len(variants) + 1
    assert base == key()


def test_cache_round_trip_is_sharded_json(tmp_path):
    cache = AnswerCache(tmp_path / "llm")
    completion = Completion('{"question": "Q?"}', 120, 30, truncated=False)
    assert cache.get(key()) is None
    cache.put(key(), completion, provider="anthropic", model="claude-haiku-4-5")
    path = tmp_path / "llm" / key()[:2] / f"{key()}.json"
    assert json.loads(path.read_text())["model"] == "claude-haiku-4-5"
    assert cache.get(key()) == completion
    assert len(cache) == 1
    assert list(path.parent.iterdir()) == [path]  # no temporary file left behind


def test_unreadable_cache_file_is_a_miss(tmp_path):
    cache = AnswerCache(tmp_path)
    cache.path(key()).parent.mkdir(parents=True)
    cache.path(key()).write_text("{not json")
    assert cache.get(key()) is None


def test_concurrent_writers_never_leave_half_a_file(tmp_path):
    cache = AnswerCache(tmp_path)
    texts = [("x" * 50_000) + str(i) for i in range(8)]
    path = cache.path(key())

    def write(text):
        for _ in range(20):
            cache.put(key(), Completion(text, 1, 1, False), provider="p", model="m")

    threads = [threading.Thread(target=write, args=(t,)) for t in texts]
    for thread in threads:
        thread.start()
    # the raw bytes, not get(): get() takes an unreadable file for a miss and would hide it
    reads, seen = 0, set()
    while any(t.is_alive() for t in threads):
        try:
            data = path.read_bytes()
        except FileNotFoundError:  # before the first write lands
            continue
        reads += 1
        seen.add(json.loads(data)["text"])  # a half-written file does not parse
    for thread in threads:
        thread.join()
    assert reads > 0
    assert seen <= set(texts)
    assert cache.get(key()).text in texts


PASSAGE = Passage("doc-1", 10, 60, "x" * 50, 1)


def test_qid_is_stable_and_never_a_chunk_or_document_id():
    qid = make_qid(PASSAGE, 0, "Why?", prompt_sha="p", identity=IDENTITY)
    assert qid == make_qid(PASSAGE, 0, "Why?", prompt_sha="p", identity=IDENTITY)
    assert qid.startswith("gs-") and "#" not in qid
    assert qid != make_qid(PASSAGE, 1, "Why?", prompt_sha="p", identity=IDENTITY)
    salted = make_qid(PASSAGE, 0, "Why?", prompt_sha="p", identity=IDENTITY, taken={qid})
    assert salted != qid and salted.startswith("gs-")


def test_prices_match_dated_model_ids_and_overrides_win():
    assert price_for("claude-haiku-4-5-20251001") == Price(input=1.0, output=5.0)
    assert price_for("claude-sonnet-4-5") == Price(input=3.0, output=15.0)
    assert price_for("claude-opus-4-1") == Price(input=15.0, output=75.0)
    assert price_for("my-model") is None
    override = {"claude-haiku-4-5": Price(input=2.0, output=4.0)}
    assert price_for("claude-haiku-4-5", override) == Price(input=2.0, output=4.0)
    assert cost_usd(Price(input=1.0, output=5.0), 1_000_000, 200_000) == 2.0


def test_budget_waits_for_requests_in_flight_then_refuses():
    budget = Budget(0.01, Price(input=1.0, output=5.0))
    held = [budget.reserve(1000, 400) for _ in range(3)]  # worst case 0.003 each
    assert None not in held
    got = []
    waiter = threading.Thread(target=lambda: got.append(budget.reserve(1000, 400)))
    waiter.start()
    waiter.join(0.2)
    assert waiter.is_alive()  # 4 x 0.003 could pass 0.01: wait for what is in flight
    budget.settle(held[0], 1000, 100)  # 0.0015 spent + 2 x 0.003 booked + 0.003 > 0.01
    waiter.join(0.2)
    assert waiter.is_alive()
    budget.settle(held[1], 1000, 100)  # 0.003 spent + 0.003 booked + 0.003 fits
    waiter.join(2)
    assert got and got[0] is not None
    budget.settle(held[2], 1000, 100)
    budget.settle(got[0], 1000, 100)
    last = budget.reserve(1000, 400)  # 0.006 spent + 0.003
    budget.settle(last, 1000, 400)  # 0.009 spent
    assert budget.reserve(1000, 400) is None  # nothing in flight: it would pass the limit
    assert budget.snapshot().requests == 5
    assert round(budget.snapshot().usd, 6) == 0.009


def test_budget_without_wait_refuses_at_once_while_requests_are_in_flight():
    # a batch holds every reservation until its results are read: waiting would never end
    budget = Budget(0.01, Price(input=1.0, output=5.0))
    held = [budget.reserve(1000, 400, wait=False) for _ in range(3)]  # worst case 0.003 each
    assert None not in held
    assert budget.reserve(1000, 400, wait=False) is None  # 4 x 0.003 could pass 0.01
    assert budget.refused_alone is None  # it would fit alone: not below one request
    budget.settle(held[0], 1000, 100)  # 0.0015 spent + 2 x 0.003 booked + 0.003 > 0.01
    assert budget.reserve(1000, 400, wait=False) is None
    budget.release(held[1])  # 0.0015 spent + 0.003 booked + 0.003 fits
    assert budget.reserve(1000, 400, wait=False) == pytest.approx(0.003)


def test_budget_without_price_or_limit_never_refuses():
    assert Budget(None, Price(input=1.0, output=5.0)).reserve(10**9, 10**6) is not None
    assert Budget(1.0, None).reserve(10**9, 10**6) is not None


def _fill(cache: AnswerCache, count: int, start: int = 0) -> dict[str, Completion]:
    answers = {
        key(question_index=i): Completion(f"answer {i}", 10, 5, False)
        for i in range(start, start + count)
    }
    for k, completion in answers.items():
        cache.put(k, completion, provider="anthropic", model="claude-haiku-4-5")
    return answers


def test_pack_moves_loose_answers_into_one_segment_that_a_new_reader_merges(tmp_path):
    cache = AnswerCache(tmp_path)
    first = _fill(cache, 5)
    assert cache.pack() == 5
    assert [p.name for p in tmp_path.iterdir()][0].startswith("seg-")
    assert len(list(tmp_path.iterdir())) == 1  # loose files and emptied shard folders gone
    second = _fill(cache, 3, start=5)  # the next run: loose again, then a second segment
    assert cache.pack() == 3
    assert len(list(tmp_path.glob("seg-*.pack"))) == 2
    reader = AnswerCache(tmp_path)
    assert len(reader) == 8
    for k, completion in {**first, **second}.items():
        assert reader.get(k) == completion and reader.contains(k)
    assert not reader.contains(key(question_index=99))
    assert reader.pack() == 0 and len(list(tmp_path.iterdir())) == 2  # nothing new: no segment


def test_pack_makes_the_same_segment_for_the_same_answers(tmp_path):
    names = []
    for run_dir in ("a", "b"):
        cache = AnswerCache(tmp_path / run_dir)
        _fill(cache, 4)
        cache.pack()
        names.append(sorted(p.name for p in (tmp_path / run_dir).iterdir()))
    assert names[0] == names[1]  # identical bytes: DVC stores and pushes one object


def test_a_crash_mid_pack_loses_nothing_and_duplicates_nothing(tmp_path):
    cache = AnswerCache(tmp_path)
    answers = _fill(cache, 4)
    loose = {p: p.read_bytes() for p in tmp_path.glob("??/*.json")}
    cache.pack()
    # killed after the segment was renamed into place, before the loose files were deleted
    for path, data in loose.items():
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(data)
    # and a segment write cut short: only its temporary file exists
    (tmp_path / ".seg-0123.jsonl.gz.abcd.tmp").write_bytes(b"\x1f\x8b partial")
    reopened = AnswerCache(tmp_path)
    assert not list(tmp_path.glob("*.tmp"))
    assert len(reopened) == 4
    assert reopened.pack() == 0  # already packed: the loose copies are dropped, no new segment
    assert len(list(tmp_path.glob("seg-*"))) == 1 and not list(tmp_path.glob("??/*.json"))
    assert all(reopened.get(k) == c for k, c in answers.items())


def test_a_reader_sees_answers_another_process_packed_after_it_opened(tmp_path):
    reader = AnswerCache(tmp_path)
    writer = AnswerCache(tmp_path)
    answers = _fill(writer, 2)
    writer.pack()
    assert all(reader.get(k) == c for k, c in answers.items())
    assert len(reader) == 2


def test_small_segments_merge_when_they_pile_up_and_a_large_one_is_left_alone(tmp_path):
    cache = AnswerCache(tmp_path)
    answers = _fill(cache, 100)
    cache.pack()
    (large,) = tmp_path.glob("seg-*.pack")
    large_bytes = large.read_bytes()
    for run in range(MERGE_FANOUT):  # one small segment per run
        answers |= _fill(cache, 2, start=100 + 2 * run)
        cache.pack()
        if run < MERGE_FANOUT - 1:
            assert len(list(tmp_path.glob("seg-*.pack"))) == run + 2
    segments = sorted(tmp_path.glob("seg-*.pack"))
    assert len(segments) == 2 and large in segments and large.read_bytes() == large_bytes
    reader = AnswerCache(tmp_path)
    assert len(reader) == 100 + 2 * MERGE_FANOUT
    assert all(reader.get(k) == c for k, c in answers.items())


def test_a_crash_mid_merge_loses_nothing_and_the_next_merge_drops_the_copies(tmp_path):
    cache = AnswerCache(tmp_path)
    answers: dict[str, Completion] = {}
    copies = {}
    for run in range(MERGE_FANOUT):
        answers |= _fill(cache, 1, start=run)
        if run == MERGE_FANOUT - 1:  # the inputs of the merge this pack makes
            copies = {p: p.read_bytes() for p in tmp_path.glob("seg-*.pack")}
        cache.pack()
    # killed after the merged segment was renamed into place, before its inputs were deleted
    for path, data in copies.items():
        path.write_bytes(data)
    reopened = AnswerCache(tmp_path)
    assert len(reopened) == MERGE_FANOUT
    assert all(reopened.get(k) == c for k, c in answers.items())
    answers |= _fill(reopened, 1, start=MERGE_FANOUT)
    reopened.pack()  # the restored copies pile up again in the smallest tier: merged
    assert len(list(tmp_path.glob("seg-*.pack"))) < len(copies)
    assert len(AnswerCache(tmp_path)) == MERGE_FANOUT + 1
    assert all(AnswerCache(tmp_path).get(k) == c for k, c in answers.items())


def test_a_first_format_segment_is_read_and_folded_into_the_next_pack(tmp_path):
    old = {key(question_index=i): Completion(f"old {i}", 10, 5, False) for i in range(3)}
    lines = "".join(
        json.dumps({"key": k, "provider": "p", "model": "m", "text": c.text, "input_tokens": 10,
                    "output_tokens": 5, "truncated": False}) + "\n"
        for k, c in old.items()
    )  # fmt: skip
    (tmp_path / "seg-0123456789abcdef01234567.jsonl.gz").write_bytes(
        gzip.compress(lines.encode(), mtime=0)
    )
    cache = AnswerCache(tmp_path)
    assert all(cache.get(k) == c for k, c in old.items())
    new = _fill(cache, 2, start=10)
    assert cache.pack() == 2
    assert [p.suffix for p in tmp_path.iterdir()] == [".pack"]
    reader = AnswerCache(tmp_path)
    assert len(reader) == 5 and all(reader.get(k) == c for k, c in {**old, **new}.items())


def test_a_damaged_segment_is_one_clear_error(tmp_path):
    _fill(AnswerCache(tmp_path), 2)
    AnswerCache(tmp_path).pack()
    (segment,) = tmp_path.glob("seg-*.pack")
    segment.write_bytes(segment.read_bytes()[:-5])
    with pytest.raises(GoldensetError, match="is not an answer segment"):
        AnswerCache(tmp_path)
