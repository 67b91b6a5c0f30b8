"""The suite's workers: each keeps to its own cores, and tests that share a module's fixture run
in one worker, which builds it once."""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

WORKERS = Path(__file__).parent / "support" / "workers.py"

SHARING = """
import pytest

@pytest.fixture(scope="module")
def built(request):
    with (request.config.rootpath / "builds").open("a") as builds:
        builds.write("built\\n")

@pytest.mark.parametrize("i", range(6))
def test_shares_what_is_built(built, i):
    pass
"""

ALONE = """
import os
import pytest

@pytest.mark.parametrize("i", range(6))
def test_needs_nothing(request, i):
    with (request.config.rootpath / "cores").open("a") as cores:
        worker = os.environ["PYTEST_XDIST_WORKER"]
        cores.write(repr((worker, sorted(os.sched_getaffinity(0)), os.environ["OMP_NUM_THREADS"])))
        cores.write("\\n")
"""


@contextmanager
def the_suites_cores() -> Iterator[set[int]]:
    """This process on the cores the suite was given (a worker of the suite keeps to its share:
    the two workers this test starts need them all), then back on its own."""
    own = os.sched_getaffinity(0)
    os.sched_setaffinity(0, os.sched_getaffinity(os.getppid()) | own)
    try:
        yield os.sched_getaffinity(0)
    finally:
        os.sched_setaffinity(0, own)


def test_workers_keep_to_their_cores_and_a_module_fixture_is_built_once(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT"):  # a run of its own
        monkeypatch.delenv(name, raising=False)
    pytester.makepyfile(workers=WORKERS.read_text(), test_sharing=SHARING, test_alone=ALONE)
    pytester.makeconftest('pytest_plugins = ["workers"]')
    with the_suites_cores() as cores:
        if len(cores) < 2:
            pytest.skip("two workers need two cores")
        result = pytester.runpytest_subprocess(
            "-n",
            "2",
            "--dist",
            "loadgroup",
            "--no-loadscope-reorder",
            "-v",
            "-p",
            "no:cacheprovider",
        )
    result.assert_outcomes(passed=12)
    ran_on = re.findall(r"\[(gw\d)\] .*PASSED (test_\w+)", result.stdout.str())
    assert len({worker for worker, module in ran_on if module == "test_sharing"}) == 1
    assert {worker for worker, _ in ran_on} == {"gw0", "gw1"}
    assert (pytester.path / "builds").read_text() == "built\n"

    lines = (pytester.path / "cores").read_text().splitlines()
    shares = {worker: (tuple(share), omp) for worker, share, omp in map(ast.literal_eval, lines)}
    assert not set(shares["gw0"][0]) & set(shares["gw1"][0])
    assert set(shares["gw0"][0]) | set(shares["gw1"][0]) == cores
    assert all(omp == str(len(share)) for share, omp in shares.values())
