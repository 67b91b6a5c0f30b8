"""The "Before you start" block every tutorial includes (docs/_snippets/before-you-start.md),
run as written in a fresh venv, the way a newcomer pastes it.

One substitution, since the test has no network (docs/development.md says so): a wheel of this
checkout for the repository URL, and the folder holding torch's CPU wheel (pip's find-links on
this machine and CI's) for PyTorch's index."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import replace
from functools import partial
from pathlib import Path

import pytest

import goldenset
from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "docs"))  # the site's own filling of {{ ... }}
from figures import fill, install_ref, parsed_file, project  # noqa: E402

BLOCK = ROOT / "docs" / "_snippets" / "before-you-start.md"
TORCH_INDEX = "--index-url https://download.pytorch.org/whl/cpu"


def install_script(markdown: str) -> str:
    """The block's ```bash lines, dedented."""
    found = re.search(r"^(\s*)```bash\n(?P<body>.*?)^\s*```$", markdown, re.M | re.S)
    assert found, "the block shows no ```bash install"
    return "\n".join(line.strip() for line in found["body"].splitlines())


def torch_wheelhouse() -> Path | None:
    """A folder of pip's find-links that holds torch's CPU wheel for this Python."""
    tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
    listed = subprocess.run(
        [sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True
    ).stdout
    folders = re.findall(r"find-links='([^']+)'", listed) + [os.environ.get("PIP_FIND_LINKS", "")]
    for folder in (Path(part) for line in folders for part in line.split()):
        if any(folder.glob(f"torch-2.13.0+cpu-{tag}-*.whl")):
            return folder
    return None


@pytest.mark.slow
def test_the_before_you_start_block_installs_goldenset_in_a_fresh_venv(tmp_path):
    wheelhouse = torch_wheelhouse()
    if wheelhouse is None:
        pytest.skip("no local wheel of torch 2.13.0's CPU build to stand in for PyTorch's index")
    wheels = tmp_path / "wheels"
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", str(ROOT), "-w", str(wheels)],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr
    [wheel] = wheels.glob("goldenset_rag-*.whl")
    facts = replace(
        project((ROOT / "pyproject.toml").read_text(encoding="utf-8")),
        install_ref=install_ref(ROOT, goldenset.__version__),
    )
    page = fill(
        BLOCK.read_text(encoding="utf-8"), "before-you-start.md", facts, partial(parsed_file, ROOT)
    )
    script = install_script(page)
    repository = f"git+{facts.repo_url}@{facts.install_ref}"
    assert repository in script and TORCH_INDEX in script  # what the substitution replaces
    # torch's dependencies, which PyTorch's index also serves, come from the package index
    script = script.replace(repository, wheel.as_uri()).replace(
        TORCH_INDEX, f"--find-links {wheelhouse}"
    )
    home = tmp_path / "home"
    home.mkdir()
    env = {
        key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")
    }
    env["HOME"] = str(home)
    # the test's own venv off PATH: the block makes and activates its own
    env["PATH"] = os.pathsep.join(
        part for part in env["PATH"].split(os.pathsep) if Path(part) != Path(sys.executable).parent
    )
    checks = "goldenset --version\npython -c 'import torch; print(torch.__version__)'"
    shell = f"set -e\n{script}\n{checks}\n"
    done = subprocess.run(
        ["bash", "-c", shell], cwd=home, env=env, capture_output=True, text=True, timeout=1200
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert f"goldenset {goldenset.__version__}" in done.stdout
    assert "2.13.0+cpu" in done.stdout  # torch's CPU build, not PyPI's CUDA one
    assert (home / ".venv" / "bin" / "goldenset").is_file()  # in the block's venv
