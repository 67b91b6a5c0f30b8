"""`goldenset review`'s edges: the project it reviews, verdicts loaded from a labels file, and the
server run until Ctrl-C."""

from __future__ import annotations

import logging
import subprocess
import webbrowser
from pathlib import Path

from goldenset.core.errors import GoldensetError
from goldenset.core.params import ReviewParams, StageParams, load_stage_params
from goldenset.corpus.verdicts import carried_line, labeller_of
from goldenset.review.running import announce, running
from goldenset.review.server import Project, serve
from goldenset.review.verdicts import parse_verdicts

log = logging.getLogger("goldenset")


class ReviewCommand(StageParams):
    review: ReviewParams = ReviewParams()


def project_at(directory: Path, labeller: str | None, blind: bool = False) -> Project:
    if not (directory / "params.yaml").is_file():
        raise GoldensetError(f"{directory} holds no params.yaml: name the pipeline's folder")
    params = load_stage_params(ReviewCommand, directory / "params.yaml").review
    return Project(directory, params, labeller or _git_user(directory), blind)


def _git_user(directory: Path) -> str:
    """The name git would commit with (its config, or GIT_AUTHOR_NAME), else "reviewer"."""
    ident = subprocess.run(
        ["git", "var", "GIT_AUTHOR_IDENT"], cwd=directory, capture_output=True, text=True
    )
    return ident.stdout.partition(" <")[0].strip() or "reviewer"


def load_verdicts(project: Project, source: Path) -> str:
    """Add a labels file's verdicts (a later line of a query and labeller wins) to the verdict
    file; the line says how many are of this golden set's queries."""
    try:
        loaded = parse_verdicts(source.read_text(encoding="utf-8"), str(source))
    except FileNotFoundError:
        raise GoldensetError(f"{source} not found") from None
    loaded.check()
    project.verdict_file.record(*loaded.latest.values())
    ours = sum(qid in project.queries for qid, _ in loaded.latest)
    return (
        f"loaded {len(loaded.latest)} verdicts ({ours} of this golden set's questions) "
        f"into {project.params.verdicts_path}"
    )


def refit_judge(project: Project) -> str:
    """The judge refitted with the project's verdicts, one a question (review.disagreement), by
    goldenset.judge.refit, written where the audit reads it; the report."""
    import pandas as pd

    from goldenset.core.paths import DOCUMENTS
    from goldenset.judge.refit import refit_with

    verdicts = project.verdict_file.read()
    verdicts.check()
    documents = pd.read_parquet(project.root / DOCUMENTS, columns=["doc_id", "text"])
    out = project.root / project.params.judge_path
    decided = verdicts.decided(project.params.disagreement)
    return refit_with(list(decided.values()), documents, out)


DEFAULT_PORT = 8765


STALE_SHOWN = 5  # stale verdicts named before the page's address


def carried_lines(project: Project) -> list[str]:
    """How the verdict file meets the golden set written now: verdicts carried over to questions
    that read the same under a new qid, and the stale ones, the first few named (none: no line)."""
    project.check()
    carried = project.carried(project.verdict_file.read())
    lines = [line] if (line := carried_line(carried)) else []
    for row in carried.stale[:STALE_SHOWN]:
        question = " ".join(str(row.get("question") or "").split())
        lines.append(f"review: stale: {row['qid']} {question!r} ({labeller_of(row)})")
    return lines


def serve_until_stopped(project: Project, port: int | None, open_page: bool) -> None:
    """Serve until Ctrl-C on `port`; None: DEFAULT_PORT, or a free one when it is taken."""
    for line in carried_lines(project):
        print(line, flush=True)
    server = serve(project, DEFAULT_PORT if port is None else port, or_free=port is None)
    url = server.url  # with the session's token: the page, and all it reads, ask for it
    where = project.params.verdicts_path
    if port is None and server.server_address[1] != DEFAULT_PORT:
        print(f"review: port {DEFAULT_PORT} is taken: serving on another", flush=True)
    print(f"review: {url} (Ctrl-C stops); verdicts go to {where}", flush=True)
    announced = announce(server.server_address[1], url, project.root)
    if open_page:
        webbrowser.open(url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        announced.unlink(missing_ok=True)
        server.server_close()


def running_lines(port: int | None = None) -> list[str]:
    """`goldenset review --list`: the address of each review server running (of `port` only
    when given), with its project."""
    return [
        f"{entry['url']} {entry['project']}"
        for entry in running()
        if port is None or entry["url"].startswith(f"http://127.0.0.1:{port}/")
    ]
