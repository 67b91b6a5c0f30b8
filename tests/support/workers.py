"""The suite on several cores (pytest-xdist: `-n auto --dist loadgroup` in pyproject.toml).

- Each worker keeps to its own share of the cores, and so does every process it starts (`dvc
  repro`, a stage, llama.cpp, torch): the writer sizes its threads by the cores it may use, and
  two workers that each took every core would make llama.cpp's spinning threads wait on each
  other.
- The longest tests start first, so that the run does not end on one of them alone.
- Tests that share what is costly to build (a fixture of their module) are marked to run in one
  worker, and so are tests that need the review server's default port. pytest-xdist 3.8 does not
  honour the marks under pytest 9.2 (pytest-xdist issue 1386): the `test` extra keeps pytest
  below it, and tests/test_workers.py fails if the groups stop taking effect.
"""

from __future__ import annotations

import os

import pytest

# The longest tests, as measured (docs/development.md, "The suite's time"): begun first
LONGEST = (
    "tests/test_docs_commands.py::test_every_command_a_page_shows_gives_the_output_it_shows[review]",
    "tests/stages/test_public_benchmark.py",
    "tests/test_docs_commands.py::test_every_command_a_page_shows_gives_the_output_it_shows[pdfs]",
    "tests/corpus/test_pdf_main_job.py",
    "tests/test_docs_install.py",
    "tests/embedding/test_e5_torch.py",
    "tests/test_own_repository_e2e.py",
)

# `goldenset review` serves on 8765 unless told otherwise: a page that starts it so, and the test
# that takes the port to see it move, must not run at once
ON_THE_DEFAULT_PORT = pytest.mark.xdist_group("the review server's default port")


def pytest_configure() -> None:
    keep_to_own_cores()  # before a test module loads torch: it sizes its threads once


def keep_to_own_cores() -> None:
    """In a worker, keep this process (and what it starts) to its share of the cores."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")  # gw0, gw1, ...
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    cores = sorted(os.sched_getaffinity(0))
    if worker is None or count < 2 or len(cores) < count:
        return
    share = cores[int(worker.removeprefix("gw")) :: count]
    os.sched_setaffinity(0, share)
    os.environ["OMP_NUM_THREADS"] = str(len(share))  # torch's threads, in the stages too


def start_order(item: pytest.Item) -> tuple[int, int]:
    """The longest tests first, longest of all first; then the other slow ones; then the rest."""
    longest = [item.nodeid.startswith(prefix) for prefix in LONGEST]
    if any(longest):
        return 0, longest.index(True)
    return (1 if item.get_closest_marker("slow") else 2), 0


def shares_a_module_fixture(item: pytest.Item) -> bool:
    """Whether the test uses a fixture its own module defines for more than one test."""
    module = getattr(item, "module", None)
    definitions = item._fixtureinfo.name2fixturedefs  # pytest's own record of what it uses
    return module is not None and any(
        fixture.scope in ("module", "session") and fixture.func.__module__ == module.__name__
        for name in item.fixturenames
        for fixture in definitions.get(name, ())
    )


@pytest.hookimpl(tryfirst=True)  # the groups are marked before pytest-xdist reads them
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Order the collected tests for the workers and group those that must share one."""
    items.sort(key=start_order)
    for item in items:
        if shares_a_module_fixture(item) and not item.get_closest_marker("xdist_group"):
            item.add_marker(pytest.mark.xdist_group(item.module.__name__))  # type: ignore[attr-defined]
