"""What calibrate says before it starts: the grid, the texts each model must embed, the time."""

from __future__ import annotations

from goldenset.calibrate.estimate import MIN_MEASURED, plan_line, read_rates, remember_rate


def test_the_plan_counts_each_models_texts_at_its_measured_rate():
    line = plan_line(5, 2, 15, {"MiniLM": 12_000, "e5": 12_000}, {"MiniLM": 0.006, "e5": 0.04})
    assert line == (
        "calibrate: 5 chunkings x 2 models: 10 runs, 15 configurations; texts to embed: "
        "MiniLM 12,000 (~72 s), e5 12,000 (~8 min); about 9 min of embedding (scoring adds "
        "seconds a run)"
    )
    warm = plan_line(1, 1, 3, {"MiniLM": 0}, {})
    assert warm.endswith(
        "texts to embed: MiniLM 0; about 0 s of embedding (scoring adds seconds a run)"
    )
    new = plan_line(1, 2, 3, {"MiniLM": 10, "e5": 5}, {"MiniLM": 0.5})
    assert "e5 5 (no rate measured yet)" in new
    assert "about 5 s of embedding and 1 model(s) not timed yet" in new


def test_a_rate_is_kept_only_from_a_run_that_measured_enough_texts(tmp_path):
    remember_rate(tmp_path, "MiniLM", MIN_MEASURED - 1, 10.0)
    assert read_rates(tmp_path) == {}
    remember_rate(tmp_path, "MiniLM", 100, 3.0)
    remember_rate(tmp_path, "e5", 200, 10.0)
    assert read_rates(tmp_path) == {"MiniLM": 0.03, "e5": 0.05}
