"""A shared S3 remote: push from one clone, pull in a fresh one, and `dvc repro` runs nothing.

The remote is a loopback S3 server (moto in server mode) reached by DVC's real S3 plugin over
HTTP; the LLM answers come from a loopback OpenAI-compatible server, so both caches travel.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goldenset.llm_stand_in import LoopbackLLM
from tests.support.dvc_project import (
    PROJECT_FILES,
    commit,
    copy_project,
    edit_params,
    run,
    stages_run,
    write_small_corpus,
)

pytest.importorskip("moto.server", reason="the S3 remote test needs the test extra (moto[server])")
pytest.importorskip("dvc_s3", reason="the S3 remote test needs dvc-s3 (the s3 extra)")
from tests.support.s3_server import LoopbackS3  # noqa: E402

pytestmark = pytest.mark.slow


def test_push_to_s3_then_pull_in_a_fresh_clone_runs_nothing(tmp_path: Path) -> None:
    with LoopbackLLM(api_key=None) as llm, LoopbackS3(tmp_path) as s3:
        project = copy_project(tmp_path / "project", PROJECT_FILES)
        write_small_corpus(project, n_docs=12)
        edit_params(
            project,
            generate={
                "provider": "openai",
                "model": "loopback-model",
                "max_questions": 4,
                "openai": {"base_url": llm.openai_url},
            },
            chunk={"strategy": "none"},
        )
        assert stages_run(run(["dvc", "repro"], project, s3.env)) == {
            "ingest",
            "chunk",
            "generate",
            "apply",
            "embed",
            "score",
            "audit",
        }
        asked = llm.requests
        assert asked >= 4
        s3.add_remote(project, "shared", "goldenset", run)
        commit(project, "first run, S3 remote")
        assert "endpointurl" in (project / ".dvc/config").read_text()
        assert "testing" not in (project / ".dvc/config").read_text()  # no credential tracked

        run(["dvc", "push"], project, s3.env)
        assert s3.object_count("goldenset/") > 0

        clone = tmp_path / "clone"
        run(["git", "clone", "-q", str(project), str(clone)], tmp_path)
        run(["dvc", "pull"], clone, s3.env)
        assert list((clone / "cache/llm").rglob("*.*"))
        assert list((clone / "cache/embeddings").glob("*.npz"))
        assert stages_run(run(["dvc", "repro"], clone, s3.env)) == set()
        assert (clone / "data/goldenset.jsonl").read_text() == (
            project / "data/goldenset.jsonl"
        ).read_text()
        scores = json.loads((clone / "metrics/scores.json").read_text())
        assert scores == json.loads((project / "metrics/scores.json").read_text())

        # a forced re-run of generate in the clone answers from the pulled cache: no request
        forced = run(["dvc", "repro", "--force", "--single-item", "generate"], clone, s3.env)
        assert "0 LLM requests" in forced
        assert llm.requests == asked
