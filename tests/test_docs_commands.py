"""Docs that cannot go stale: every command the tutorials and the troubleshooting page show is
run, in order, in a fresh folder, and the output each page shows must be in the real output
(tests/doc_commands.py reads the pages; docs/development.md says how to write them)."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from goldenset.generation.providers.local_model import model_cache_dir
from tests.conftest import ROOT
from tests.doc_commands import Command, FileEdit, drift, output_lines, pattern, steps
from tests.support.workers import ON_THE_DEFAULT_PORT

sys.path.insert(0, str(ROOT / "docs"))  # the site's own filling of {{ ... }}: not the package's
from figures import fill, parsed_file, project  # noqa: E402

DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("tutorials/*.md")) + sorted(DOCS.glob("troubleshooting.md"))
# a page that starts the review server without --port takes its default port
ON_DEFAULT_PORT = re.compile(r"^\$ goldenset review (?!.*--port)", re.MULTILINE)
COMMAND_SECONDS = 900
SECRETS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL")


def page_environment(home: Path) -> dict[str, str]:
    """What a reader's fresh terminal has: this environment's tools, no key, no network."""
    env = {key: value for key, value in os.environ.items() if key not in SECRETS}
    env.pop("PYTHONPATH", None)
    env.update(
        PATH=os.pathsep.join([str(Path(sys.executable).parent), env["PATH"]]),
        HF_HUB_OFFLINE="1",
        DVC_NO_ANALYTICS="1",
        GIT_AUTHOR_NAME="reader",
        GIT_AUTHOR_EMAIL="reader@example.invalid",
        GIT_COMMITTER_NAME="reader",
        GIT_COMMITTER_EMAIL="reader@example.invalid",
        GIT_CONFIG_GLOBAL=str(home / ".gitconfig"),
        GIT_CONFIG_NOSYSTEM="1",
        HOME=str(home),
        # the one download a reader's machine already has: the bundled model, assembled once
        GOLDENSET_MODEL_DIR=str(model_cache_dir()),
    )
    # git's own defaults: a newcomer's first branch may be master, so a page names its branch
    (home / ".gitconfig").write_text("")
    return env


class Shell:
    """One reader's terminal: each command a bash of its own, the folder and exports carried
    over; what a command leaves running is stopped with the page."""

    def __init__(self, folder: Path, state: Path, env: dict[str, str]) -> None:
        self.folder, self.state, self.groups = folder, state, []
        (state / "env").write_text("")
        (state / "cwd").write_text(str(folder))
        self.env = env

    def run(self, command: str) -> tuple[int, str]:
        script = (
            f'cd "$(cat {self.state}/cwd)"\n. {self.state}/env\n{command}\n'
            f"status=$?\npwd > {self.state}/cwd\nexport -p > {self.state}/env\nexit $status\n"
        )
        output = self.state / "output"
        with output.open("w") as sink:
            process = subprocess.Popen(
                ["bash", "-c", script],
                stdout=sink,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=self.env,
                start_new_session=True,
            )
            self.groups.append(process.pid)
            status = process.wait(timeout=COMMAND_SECONDS)
        return status, output.read_text(errors="replace")

    @property
    def cwd(self) -> Path:
        return Path((self.state / "cwd").read_text().strip())

    def close(self) -> None:
        """Stop what the page left running, and wait (10 s at most) until it has stopped."""
        for group in self.groups:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(group, signal.SIGTERM)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(map(running, self.groups)):
            time.sleep(0.05)


def running(group: int) -> bool:
    """Whether a process of the group is alive (a zombie has stopped)."""
    members = subprocess.run(["pgrep", "-g", str(group)], capture_output=True, text=True)
    return any(map(alive, members.stdout.split()))


def alive(pid: str) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1][:1]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state != "Z"


def merge(base: object, change: object) -> object:
    if isinstance(base, dict) and isinstance(change, dict):
        return {**base, **{key: merge(base.get(key), value) for key, value in change.items()}}
    return change


def edit(folder: Path, step: FileEdit) -> None:
    path = folder / step.path
    path.parent.mkdir(parents=True, exist_ok=True)
    if step.merges and path.exists():
        merged = merge(yaml.safe_load(path.read_text()), yaml.safe_load(step.text))
        path.write_text(yaml.safe_dump(merged, sort_keys=False, allow_unicode=True))
    else:
        path.write_text(step.text)


def as_built(page: Path) -> str:
    """The page's Markdown as the site shows it: version, repository URL and figures filled."""
    facts = project((ROOT / "pyproject.toml").read_text())
    return fill(page.read_text(), page.name, facts, lambda path: parsed_file(ROOT, path))


def run_page(page: Path, folder: Path, state: Path, root: Path = ROOT) -> list[str]:
    """Every step of the page; the drifts found, each naming the page line and command."""
    shell = Shell(folder, state, page_environment(state))
    problems = []
    try:
        for step in steps(as_built(page)):
            if isinstance(step, FileEdit):
                edit(shell.cwd, step)
                continue
            status, output = shell.run(step.text)
            where = f"{page.relative_to(root)}:{step.line} `$ {step.text.splitlines()[0]}`"
            # DOCS_TAIL=200 shows more of a drifting command's output
            tail = "\n".join(output_lines(output)[-(int(os.environ.get("DOCS_TAIL", "40"))) :])
            if status != step.exits:
                problems.append(f"{where} exited {status}, the page says {step.exits}:\n{tail}")
                break  # what follows depends on it
            missing = drift(step.shown, output)
            if missing:
                problems.append(f"{where}: {missing}; the real output ends:\n{tail}")
    finally:
        shell.close()
    return problems


def as_run(page: Path):
    """The page as a test's parameter, named by its file."""
    marks = [ON_THE_DEFAULT_PORT] if ON_DEFAULT_PORT.search(page.read_text()) else []
    return pytest.param(page, marks=marks, id=page.stem)


@pytest.mark.slow
@pytest.mark.parametrize("page", [as_run(page) for page in PAGES])
def test_every_command_a_page_shows_gives_the_output_it_shows(page, tmp_path):
    folder, state = tmp_path / "reader", tmp_path / "state"
    folder.mkdir()
    state.mkdir()
    started = time.monotonic()
    problems = run_page(page, folder, state)
    print(f"{page.relative_to(ROOT)}: {time.monotonic() - started:.0f} s from a fresh folder")
    assert not problems, "\n\n".join(problems)
    shutil.rmtree(folder, ignore_errors=True)


PAGE = """\
Some prose.

```console
$ goldenset demo docs
wrote 40 documents into docs/
…
$ dvc repro \\
    goldenset/dvc.yaml  # exits 1: on purpose
took ~~12.5 s, ~~$0.0031
```

<!-- test: export SPEED=1 -->

```yaml title="goldenset/params.yaml"
generate:
  provider: anthropic
```

```bash
pip install goldenset-rag
```
"""


def test_a_page_reads_as_its_commands_and_file_edits_in_order():
    found = steps(PAGE)
    assert [type(step) for step in found] == [Command, Command, Command, FileEdit]
    example, repro, hidden, params = found
    assert (example.text, example.line, example.exits) == ("goldenset demo docs", 4, 0)
    assert example.shown == ["wrote 40 documents into docs/", "…"]
    assert repro.text == "dvc repro \\\n    goldenset/dvc.yaml  # exits 1: on purpose"
    assert repro.exits == 1 and repro.shown == ["took ~~12.5 s, ~~$0.0031"]
    assert (hidden.text, hidden.shown) == ("export SPEED=1", [])
    assert (params.path, params.merges, params.text) == (
        "goldenset/params.yaml",
        True,
        "generate:\n  provider: anthropic\n",
    )


def test_shown_output_matches_in_order_with_varying_numbers_only_where_marked():
    real = "start\r\n  took 9.0 s,   $0.12\nwrote 40 documents into docs/\nend\n"
    assert drift(["took ~~12.5 s, ~~$0.0031", "…", "end"], real) is None
    assert drift(["…40 documents…"], real) is None
    # a number not marked as varying must be the real one
    assert "'took 12.5 s, $0.12'" in drift(["took 12.5 s, $0.12"], real)
    # the order is the page's: a line shown after another must come after it
    problem = drift(["end", "start"], real)
    assert problem == "the page shows 'start', not in the real output after the line 'end'"
    assert pattern("~~$1").search("$2,000.5") and not pattern("~~$1").search("2")
    assert pattern("expect ~40 requests").search("expect ~29 requests")
    # a single `~` is a real one: shown where the program prints none, it fails, naming it
    assert drift(["took ~9.0 s, ~~$0.12"], real) == (
        "the page shows 'took ~9.0 s, ~~$0.12', not in the real output"
    )


def test_a_drifted_page_fails_naming_its_line_and_what_it_shows(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("```console\n$ echo 'recall@10 0.91'\nrecall@10 0.90\n$ false\n```\n")
    folder, state = tmp_path / "reader", tmp_path / "state"
    folder.mkdir()
    state.mkdir()
    relative = page.relative_to(tmp_path)
    problems = run_page(page, folder, state, tmp_path)
    assert problems[0].startswith(f"{relative}:2 `$ echo 'recall@10 0.91'`: the page shows")
    assert "'recall@10 0.90', not in the real output" in problems[0]
    assert problems[1].startswith(f"{relative}:4 `$ false` exited 1, the page says 0")


def test_the_shell_keeps_the_folder_and_exports_and_stops_what_a_page_left_running(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "```console\n$ sleep 300 &\n"
        "$ mkdir work; cd work; export WORD=kept\n$ pwd; echo $WORD\n…/work\nkept\n```\n"
        '```yaml title="p.yaml"\na: {b: 1}\n```\n```yaml title="p.yaml"\na: {c: 2}\n```\n'
        "```console\n$ cat p.yaml\na:\n  b: 1\n  c: 2\n```\n"
    )
    folder, state = tmp_path / "reader", tmp_path / "state"
    folder.mkdir()
    state.mkdir()
    assert run_page(page, folder, state, tmp_path) == []
    sleeping = subprocess.run(["pgrep", "-f", "sleep 300"], capture_output=True, text=True)
    assert sleeping.stdout == ""
