"""The judge: its features, its logistic models, its validation against labels, and the audit
flag it raises on questions a strict reviewer would reject."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

from goldenset.audit.checks import Acceptance, render_report, run_audit
from goldenset.core.echo import WindowFrequency, WindowIndex
from goldenset.core.errors import GoldensetError
from goldenset.core.files import read_jsonl
from goldenset.core.params import AuditParams
from goldenset.judge.features import FEATURES, question_features, rarest_word
from goldenset.judge.model import (
    CRITERIA,
    FAILS,
    Judge,
    accepted,
    cross_validated_auc,
    fit_criterion,
    judge_json,
    load_judge,
)
from goldenset.judge.reader import Reader
from goldenset.judge.referee import REFEREE, load_referee
from goldenset.judge.validate import corpus_indexes, validate
from tests.support.dvc_project import ROOT

VAGUE = [
    "What did the study find?",
    "What do the results show?",
    "What happened to them?",
    "Why is this important?",
    "What did the researchers conclude?",
]


@pytest.fixture(scope="module")
def referee():
    return load_referee()


@pytest.fixture(scope="module")
def reader():
    return Reader()


@pytest.fixture(scope="module")
def read(reader):
    return reader.read


@pytest.fixture(scope="module")
def sample_documents() -> dict[str, WindowIndex]:
    return corpus_indexes(ROOT / "data" / "docs")


def test_rarest_word_is_the_rarest_word_the_question_shares_with_its_document():
    documents = [
        WindowIndex.of(text) for text in ("zebrafish fins regrow", "fins of sharks", "fins")
    ]
    rarity = WindowFrequency(documents)
    # "zebrafish" is in one of three windows, "fins" in all three; "whales" is not in the document
    assert rarest_word("Do zebrafish fins regrow?", documents[0], rarity) == pytest.approx(
        -np.log10(1 / 3)
    )
    assert rarest_word("Do fins regrow in whales?", documents[1], rarity) == pytest.approx(0.0)
    assert rarest_word("What about whales?", documents[1], rarity) == 0.0


@pytest.mark.slow
def test_features_measure_each_question_against_its_evidence_with_the_referee(referee, read):
    text = "Zebrafish regrow their fins within two weeks. Sharks do not regrow fins."
    documents = {"d": WindowIndex.of(text)}
    golden = pd.DataFrame(
        {
            "question": ["How fast do zebrafish regrow fins?", "What happened?"],
            "evidence": ["Zebrafish regrow their fins within two weeks."] * 2,
            "doc_id": ["d", "d"],
        }
    )
    rarity = WindowFrequency(documents.values())
    features = question_features(golden, documents, rarity, referee, read)
    assert list(features.columns) == FEATURES
    on_topic, vague = features.to_dict("records")
    assert on_topic["referee_cosine"] > vague["referee_cosine"]
    assert on_topic["evidence_overlap"] == pytest.approx(3 / 4)  # fast is not in the sentence
    assert vague["content_words"] == 1.0  # "happened"
    assert vague["rarest_word"] == 0.0
    assert on_topic["writer_likelihood"] > vague["writer_likelihood"]


@pytest.mark.slow
def test_a_referee_with_a_cache_folder_keeps_its_vectors_there_for_the_next_run(referee, tmp_path):
    from goldenset.judge.referee import REFEREE_FOLDER

    texts = ["How fast do zebrafish regrow fins?", "Do sharks regrow fins?"]
    first = load_referee(tmp_path)(texts, "query: ")
    assert list((tmp_path / REFEREE_FOLDER).glob("*.npz"))  # kept
    # the cached referee's vectors are the model's, and a later run answers with the kept ones
    assert np.einsum("ij,ij->i", first, referee(texts, "query: ")).min() > 0.999
    assert np.array_equal(load_referee(tmp_path)(texts, "query: "), first)


@pytest.mark.slow
def test_the_reader_says_yes_to_a_sentence_that_answers_and_no_to_one_that_does_not(read):
    sentence = "Zebrafish regrow their amputated fins within two weeks."
    answered, _ = read(sentence, "How long do zebrafish take to regrow their fins?")
    unanswered, _ = read(sentence, "Why do sharks fail to regrow their fins?")
    assert answered > 0 > unanswered
    # the same pair read again, after another (the instruction kept from the call before),
    # reads the same
    assert read(sentence, "How long do zebrafish take to regrow their fins?")[0] == answered


@pytest.mark.slow
def test_the_readers_logits_are_llama_cpps_for_every_token_on_the_rows_it_asks_for(reader):
    """The reader has llama.cpp compute the output layer for the rows it reads only, and keeps
    the instruction's tokens for the next call: both give llama-cpp-python's own logits for the
    same tokens evaluated in the same steps (the instruction alone, then the rest)."""
    import llama_cpp

    from goldenset.generation.providers.local_model import default_model_path
    from goldenset.judge.reader import CONTEXT_TOKENS

    everything = llama_cpp.Llama(
        model_path=str(default_model_path()), n_ctx=CONTEXT_TOKENS, logits_all=True, verbose=False
    )
    shared = reader._tokens("Sentence: zebrafish regrow their fins within two weeks.\nQuestion:")
    for question in (" How fast do zebrafish regrow fins?", " Do sharks regrow fins?"):
        tokens = shared + reader._tokens(question)
        rows = [len(shared), len(shared) + 2, len(tokens) - 1]
        everything.reset()
        everything.eval(tokens[: len(shared)])
        everything.eval(tokens[len(shared) :])
        expected = np.asarray(everything.scores[rows], dtype=np.float64)
        # the second question finds the shared tokens kept from the first
        assert np.abs(reader._logits(tokens, rows, len(shared)) - expected).max() < 1e-3


@pytest.mark.slow
def test_the_reader_asks_of_a_claim_whether_the_sentence_states_it(read):
    sentence = "Zebrafish regrow their amputated fins within two weeks."
    stated, _ = read(sentence, "Zebrafish regrow lost fins in two weeks.", "claim")
    unstated, _ = read(sentence, "Sharks regrow their teeth every month.", "claim")
    assert stated > 0 > unstated


def test_a_criterion_model_gives_scikit_learns_probabilities_and_survives_its_file():
    rng = np.random.default_rng(0)
    features = pd.DataFrame(rng.normal(size=(80, 3)) * [1, 5, 0.1] + [0, 3, 1], columns=list("xyz"))
    accepted_ = (features["x"] + features["z"] * 10 + rng.normal(size=80) > 10).to_numpy(int)
    model = fit_criterion(features, accepted_, auc=0.9)
    x = features.to_numpy()
    reference = LogisticRegression().fit((x - x.mean(0)) / x.std(0), accepted_)
    expected = reference.predict_proba((x - x.mean(0)) / x.std(0))[:, 1]
    assert np.allclose(model.probability(features), expected, atol=1e-9)
    reloaded = json.loads(judge_json(Judge("referee", 80, {"pass": model})))
    assert reloaded["models"]["pass"]["auc"] == 0.9


def test_the_judge_round_trips_through_its_weights_file(tmp_path):
    features = pd.DataFrame({"x": [0.0, 1.0, 2.0, 3.0]})
    model = fit_criterion(features, np.array([0, 0, 1, 1]), auc=0.75)
    path = tmp_path / "weights.json"
    path.write_text(judge_json(Judge("referee", 4, {"pass": model})))
    judge = load_judge(path)
    assert judge.models["pass"] == model
    assert not judge.models["pass"].trusted
    assert judge.probabilities(features)["pass"].is_monotonic_increasing


def test_cross_validated_auc_sees_a_separating_feature_and_not_noise():
    rng = np.random.default_rng(1)
    y = np.repeat([0, 1], 50)
    separating = pd.DataFrame({"x": y + rng.normal(scale=0.1, size=100)})
    noise = pd.DataFrame({"x": rng.normal(size=100)})
    assert cross_validated_auc(separating, y, 5, 3, 0).min() > 0.99
    assert abs(cross_validated_auc(noise, y, 5, 3, 0).mean() - 0.5) < 0.15


def test_validation_trusts_only_a_criterion_that_ranks_held_out_labels():
    rng = np.random.default_rng(2)
    n = 120
    failed = rng.choice(["a", "b", None], size=n)
    rows = pd.DataFrame(rng.normal(size=(n, len(FEATURES))), columns=FEATURES)
    # the referee cosine tells "answered" apart; nothing tells "specific"
    rows["referee_cosine"] += 3 * (failed != "a")
    rows["failed"] = failed
    rows["collection"] = np.where(np.arange(n) < n // 2, "one", "two")
    judge, report = validate(rows)
    assert judge.models["answered"].trusted
    assert not judge.models["specific"].trusted
    assert "| answered |" in report and "one " in report


def test_failure_kinds_fail_their_criteria():
    labels = pd.DataFrame({"failed": [None, "a", "b", "both", "nonsense"]})
    assert accepted(labels, "answered").tolist() == [1, 0, 1, 0, 0]
    assert accepted(labels, "specific").tolist() == [1, 1, 0, 0, 0]
    assert accepted(labels, "pass").tolist() == [1, 0, 0, 0, 0]
    assert set(FAILS) == set(CRITERIA)


def test_the_shipped_weights_are_the_referees_and_the_features():
    judge = load_judge()
    assert judge.referee == REFEREE.model
    assert judge.labels >= 200
    for model in judge.models.values():
        assert model.features == FEATURES
        assert 0.5 < model.auc <= 1


@pytest.mark.slow
def test_the_audit_flag_rises_on_questions_a_strict_reviewer_rejects(
    referee, read, sample_documents
):
    """The labelled passes of the shipped set against the same evidence asked vaguely: the
    judge's estimate falls, and below audit.min_pass_share the flag rises."""
    labels = pd.DataFrame(read_jsonl(ROOT / "labels" / "strict.jsonl"))
    good = labels[labels["verdict"] == "pass"].head(20).reset_index(drop=True)
    bad = good.assign(question=[VAGUE[i % len(VAGUE)] for i in range(len(good))])
    judge = load_judge()
    rarity = WindowFrequency(sample_documents.values())
    aucs = {name: model.auc for name, model in judge.models.items()}
    params = AuditParams(min_pass_share=0.2, sample_size=3)
    audits = {}
    for name, golden in (("good", good), ("bad", bad)):
        features = question_features(golden, sample_documents, rarity, referee, read)
        judged = Acceptance(judge.probabilities(features).set_axis(golden["qid"]), aucs)
        vectors = np.eye(len(golden), dtype=np.float32)
        audits[name] = run_audit(golden, sample_documents, vectors, {}, params, {}, judged)
    good_pass, bad_pass = (audits[n].metrics["judge"]["pass"] for n in ("good", "bad"))
    assert bad_pass["high"] < 0.2 < good_pass["low"]
    assert not any(flag.startswith("judge:") for flag in audits["good"].flags)
    assert any(flag.startswith("judge: an estimated") for flag in audits["bad"].flags)
    report = render_report(audits["bad"], params)
    assert "Least likely to pass a strict reviewer" in report and "judge: pass 0.0" in report


def test_cached_readings_start_empty_without_a_file_and_a_damaged_file_is_an_error(tmp_path):
    from goldenset.judge.reader import READINGS_FILE, cached_read

    cached_read(tmp_path / "absent")  # opens without a file, loading no model
    assert not (tmp_path / "absent").exists()  # nothing written before a reading
    (tmp_path / READINGS_FILE).write_text("[[0.5, -1.0]]", encoding="utf-8")
    with pytest.raises(GoldensetError) as caught:
        cached_read(tmp_path)
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / READINGS_FILE} is a damaged cache")
    assert "delete it, and the next run asks for the bundled model's readings again" in message


@pytest.mark.slow
def test_cached_readings_are_the_readers_and_a_rerun_reads_from_them(read, tmp_path):
    from goldenset.judge.reader import READINGS_FILE, cached_read

    pairs = [
        ("Zebrafish regrow their fins within two weeks.", "How fast do zebrafish regrow fins?"),
        ("Sharks do not regrow fins.", "Do sharks regrow fins?"),
    ]
    cached = cached_read(tmp_path)
    first = [cached(s, q) for s, q in pairs]
    kept = json.loads((tmp_path / READINGS_FILE).read_text())
    assert sorted(map(tuple, kept.values())) == sorted(first)  # what was read is what is kept
    # the reader's own: llama.cpp's numbers move a little with what it evaluated before
    assert first == [pytest.approx(read(s, q), abs=0.1) for s, q in pairs]
    # a later run answers from the file, not the model: a planted reading comes back
    planted = {key: [9.0, -9.0] for key in kept}
    (tmp_path / READINGS_FILE).write_text(json.dumps(planted))
    again = cached_read(tmp_path)
    assert [again(s, q) for s, q in pairs] == [(9.0, -9.0), (9.0, -9.0)]
    assert again(pairs[0][0], pairs[0][1], "claim") == pytest.approx(
        read(*pairs[0], "claim"), abs=0.1
    )
