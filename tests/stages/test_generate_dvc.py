"""The generate stage under the real dvc CLI: `dvc repro --force` keeps the persisted answer cache
and asks the LLM nothing; the cache and both outputs are recorded in dvc.lock."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from goldenset.llm_stand_in import LoopbackLLM
from tests.conftest import ROOT
from tests.stages.test_generate import examples_file_params, make_project

pytestmark = pytest.mark.slow


def run(args: list[str], cwd: Path, *, ok: bool = True, **env_extra: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    env["PYTHONPATH"] = str(cwd / "src")
    env.update(env_extra)
    result = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert (result.returncode == 0) == ok, f"{' '.join(args)}:\n{result.stdout}\n{result.stderr}"
    return result.stdout + result.stderr


def dvc_project(tmp_path: Path, generate: dict) -> Path:
    project = make_project(tmp_path, generate)
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params["generate"].update(generate)
    (project / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    shutil.copy(ROOT / "dvc.yaml", project / "dvc.yaml")
    for folder in ("src", "examples"):
        ignore = shutil.ignore_patterns("__pycache__")
        shutil.copytree(ROOT / folder, project / folder, ignore=ignore)
    run(["git", "init", "-q"], project)
    run(["dvc", "init", "-q"], project)
    shutil.copy(ROOT / ".dvcignore", project / ".dvcignore")
    run(["dvc", "config", "core.analytics", "false"], project)
    # what generate reads besides the documents: the plugins installed (none here)
    run(["dvc", "repro", "--single-item", "plugins"], project)
    return project


def test_dvc_repro_force_asks_nothing_and_tracks_the_cache(tmp_path):
    with LoopbackLLM(api_key=None) as server:
        generate = {
            "provider": "openai",
            "model": "loopback-model",
            "max_questions": 6,
            "openai": {"base_url": server.openai_url},
        }
        project = dvc_project(tmp_path, generate)

        first = run(["dvc", "repro", "--single-item", "generate"], project)
        assert "Running stage 'generate'" in first
        assert server.requests == 6
        lock = yaml.safe_load((project / "dvc.lock").read_text())["stages"]["generate"]
        assert {out["path"] for out in lock["outs"]} == {
            "data/goldenset.jsonl",
            "data/goldenset.rejects.jsonl",
            "data/generate_stats.json",
            "cache/llm",
        }
        cache_entry = next(out for out in lock["outs"] if out["path"] == "cache/llm")
        # the 6 answers packed into one segment; the writer's history beside them is left out
        # of the hash (.dvcignore): its seconds differ by machine, and a fresh clone's run must
        # leave dvc.lock as committed
        assert cache_entry["nfiles"] == 1
        history = project / "cache" / "llm" / "writer_history.json"
        assert history.is_file()
        measured = json.loads(history.read_text())
        for entry in measured.values():  # another machine's speed
            entry["seconds_per_request"] = 2 * (entry["seconds_per_request"] or 1)
        history.write_text(json.dumps(measured))
        assert "up to date" in run(["dvc", "status", "generate"], project)

        again = run(["dvc", "repro", "--force", "--single-item", "generate"], project)
        assert "Running stage 'generate'" in again
        assert "6 answers from cache, 0 LLM requests" in again
        assert server.requests == 6


def test_a_budget_stop_is_not_recorded_and_the_next_repro_pays_only_the_rest(tmp_path):
    with LoopbackLLM() as server:
        generate = {"provider": "anthropic", "max_questions": 6, "concurrency": 1}
        project = dvc_project(tmp_path, {**generate, "max_usd": 0.004})
        env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": server.url}
        stopped = run(["dvc", "repro", "--single-item", "generate"], project, ok=False, **env)
        asked = server.requests
        assert 0 < asked < 6
        assert f"{6 - asked} of 6 questions still to ask" in stopped
        lock = project / "dvc.lock"
        assert not lock.exists() or "generate" not in yaml.safe_load(lock.read_text())["stages"]

        params = yaml.safe_load((project / "params.yaml").read_text())
        params["generate"]["max_usd"] = 1.0
        (project / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
        resumed = run(["dvc", "repro", "--single-item", "generate"], project, **env)
        assert f"{asked} answers from cache, {6 - asked} LLM requests" in resumed
        assert server.requests == 6 and max(server.answered().values()) == 1
        assert "generate" in yaml.safe_load(lock.read_text())["stages"]


def test_editing_the_example_queries_file_changes_the_generate_stage(tmp_path):
    queries = {"_id": "q1", "text": "do statins prevent strokes"}
    with LoopbackLLM(api_key=None) as server:
        generate = examples_file_params(server)
        project = dvc_project(tmp_path, generate)
        examples = project / "examples" / "queries.jsonl"
        examples.write_text(json.dumps(queries) + "\n")
        run(["dvc", "repro", "--single-item", "generate"], project)
        assert "up to date" in run(["dvc", "status", "generate"], project)

        examples.write_text(json.dumps({**queries, "text": "can statins cause diabetes"}) + "\n")
        status = run(["dvc", "status", "generate"], project)
        assert "changed deps" in status and "modified:           examples" in status

        # outside examples/, DVC could not see it change: refused, naming the param
        (project / "queries.jsonl").write_text(json.dumps(queries) + "\n")
        params = yaml.safe_load((project / "params.yaml").read_text())
        params["generate"]["example_queries"] = "queries.jsonl"
        (project / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
        refused = run(["dvc", "repro", "--single-item", "generate"], project, ok=False)
        assert "generate.example_queries: queries.jsonl is outside examples/" in refused
