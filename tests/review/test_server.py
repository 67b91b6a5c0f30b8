"""`goldenset review` as a process: its errors, --load, the API, and a server killed while it
writes."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from goldenset.cli import main
from goldenset.core.params import ReviewParams
from goldenset.corpus.verdicts import read_verdicts
from tests.conftest import ROOT
from tests.review.conftest import post, served, signed_in, write_project
from tests.review.test_page import toy_questions


@pytest.fixture
def project(tmp_path) -> Path:
    return write_project(tmp_path / "project", *toy_questions(60))


def test_the_api_answers_a_bad_request_with_400(project):
    with served(project) as url:
        with pytest.raises(urllib.error.HTTPError) as error:
            post(url + "/api/verdict", {"qid": "gs-000", "kind": "maybe"})
        assert error.value.code == 400
        assert "pass or one of a, b, both, nonsense" in json.loads(error.value.read())["error"]
        with pytest.raises(urllib.error.HTTPError) as error:
            urllib.request.urlopen(url + "/api/query?qid=nope", timeout=10)
        assert error.value.code == 400
        state = json.loads(urllib.request.urlopen(url + "/api/state", timeout=10).read())
        assert len(state["order"]) == 60 and state["estimate"] == "no verdict yet"
        page = urllib.request.urlopen(url, timeout=10).read().decode()
        assert "http" not in page.replace("http://127.0.0.1", "")  # loads nothing from outside


def test_errors_are_one_line(project, tmp_path, capsys):
    (project / "data/goldenset.jsonl").write_text("")
    assert main(["review", str(project), "--port", "0"]) == 2
    assert capsys.readouterr().err.strip().endswith("holds no question to review")
    assert main(["review", str(tmp_path / "nowhere")]) == 2
    assert "holds no params.yaml" in capsys.readouterr().err
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    write_project(project, *toy_questions(3))
    assert main(["review", str(project), "--port", str(busy.getsockname()[1])]) == 2
    assert "choose another with --port" in capsys.readouterr().err
    busy.close()


def test_load_adds_a_labels_file(project, capsys):
    labels = ROOT / "labels/steered_set.jsonl"
    assert main(["review", str(project), "--load", str(labels)]) == 0
    out = capsys.readouterr().out.strip()
    assert out == "loaded 90 verdicts (0 of this golden set's questions) into review/verdicts.jsonl"
    assert len(read_verdicts(project / "review/verdicts.jsonl").by_qid) == 90
    bad = project / "bad.jsonl"
    bad.write_text('{"qid": "x", "verdict": "fail", "failed": "c"}\n')
    assert main(["review", str(project), "--load", str(bad)]) == 2
    assert f"{bad}:1: failed 'c' is not one of a, b, both, nonsense" in capsys.readouterr().err


# The server, with os.replace made to kill the process on its Nth rename onto verdicts.jsonl:
# the new file is whole on disk (written, flushed, fsynced) and not yet renamed into place.
KILLED_AT_RENAME = """
import os, signal, sys
real, calls = os.replace, []
def replace(source, target, *args, **kwargs):
    if str(target).endswith("verdicts.jsonl"):
        calls.append(target)
        if len(calls) == int(sys.argv[1]):
            os.kill(os.getpid(), signal.SIGKILL)
    return real(source, target, *args, **kwargs)
os.replace = replace
from goldenset.cli import main
sys.exit(main(["review", sys.argv[2], "--port", "0"]))
"""


def _review_server(project: Path, *before: str) -> tuple[subprocess.Popen, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    server = subprocess.Popen(
        [sys.executable, *before, str(project)], stdout=subprocess.PIPE, text=True, env=env
    )
    return server, signed_in(server.stdout.readline().split()[1])


def test_a_server_killed_between_writing_and_renaming_loses_no_verdict_it_confirmed(project):
    server, url = _review_server(project, "-c", KILLED_AT_RENAME, "4")
    for i in range(3):
        post(url + "/api/verdict", {"qid": f"gs-{i:03d}", "kind": "pass"})
    with pytest.raises(OSError):  # the fourth write dies between its two steps
        post(url + "/api/verdict", {"qid": "gs-003", "kind": "a"})
    server.wait(10)
    path = project / "review/verdicts.jsonl"
    [written] = path.parent.glob(".verdicts.jsonl.*.tmp")  # whole, never renamed
    assert len(read_verdicts(written).latest) == 4
    verdicts = read_verdicts(path)
    assert verdicts.problems == [] and set(verdicts.by_qid) == {"gs-000", "gs-001", "gs-002"}
    server, url = _review_server(project, "-m", "goldenset", "review", "--port", "0")
    try:  # the next server goes on from the file as it was, the dead one's file removed
        assert not list(path.parent.glob(".verdicts.jsonl.*.tmp"))
        post(url + "/api/verdict", {"qid": "gs-003", "kind": "a"})
    finally:
        server.kill()
        server.wait(10)
    assert set(read_verdicts(path).by_qid) == {"gs-000", "gs-001", "gs-002", "gs-003"}


def test_a_refit_with_too_few_of_a_kind_writes_no_judge(project, capsys):
    """Four passes cannot be checked held out: no judge.json, which the audit would use."""
    from goldenset.review.server import Project
    from goldenset.review.verdicts import VerdictFile, verdict_row

    queries = Project(project, ReviewParams(), "tester").queries
    rows = [verdict_row(q, "pass", "", "tester", "random") for q in list(queries.values())[:4]]
    VerdictFile(project / "review/verdicts.jsonl").record(*rows)
    assert main(["review", str(project), "--refit"]) == 2
    error = capsys.readouterr().err.strip()
    assert error.endswith("No judge written: the audit keeps the judge it had")
    assert "4 passes and 0 fails" in error and len(error.splitlines()) == 1
    assert not (project / "review/judge.json").exists()
