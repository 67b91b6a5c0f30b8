"""The review page as a person uses it: the real server on a loopback port, headless Chromium
driven by Playwright (the system's Chromium: nothing is downloaded)."""

from __future__ import annotations

import json
import re
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pandas as pd

from goldenset.core.files import write_parquet
from goldenset.core.params import ReviewParams
from goldenset.corpus.verdicts import read_verdicts
from goldenset.review.server import Project, serve
from tests.conftest import ROOT


def golden_rows(project: Path) -> list[dict]:
    """The golden set a pipeline folder holds, row by row."""
    return [json.loads(line) for line in (project / "data/goldenset.jsonl").open()]


def write_project(folder: Path, questions: list[dict], documents: list[dict]) -> Path:
    """A pipeline folder holding what the page reads: params.yaml, the golden set, documents."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "params.yaml").write_text((ROOT / "params.yaml").read_text())
    (folder / "data").mkdir(exist_ok=True)
    (folder / "data/goldenset.jsonl").write_text(
        "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in questions)
    )
    write_parquet(pd.DataFrame(documents), folder / "data/documents.parquet")
    return folder


TOKENS: dict[str, str] = {}  # a served base URL -> its session token


@contextmanager
def served(folder: Path, labeller: str = "tester", blind: bool = False, **params) -> Iterator[str]:
    """The review server of a folder on a free loopback port, in a thread: its base URL. The
    test's urllib calls carry the session's cookie, as the person's browser does once the
    printed address (with its token) is opened."""
    server = serve(Project(folder, ReviewParams(**params), labeller, blind), 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield signed_in(server.url)
    finally:
        urllib.request.install_opener(urllib.request.build_opener())
        server.shutdown()
        server.server_close()


def signed_in(printed: str) -> str:
    """The base URL of the address a review server printed (with its token); from now on the
    test's urllib calls carry the cookie its first load sets, as a browser's do."""
    base, token = printed.split("/?token=")
    TOKENS[base] = token
    browser_like = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
    browser_like.open(printed, timeout=10).read()
    urllib.request.install_opener(browser_like)
    return base


def with_token(url: str) -> str:
    """The address `goldenset review` prints for a served base URL: its page, with its token."""
    return f"{url}/?token={TOKENS[url]}"


def open_page(browser, url: str):
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(with_token(url))
    page.wait_for_selector("body[data-ready=true]")
    page.errors = errors
    return page


def current_qid(page, moved_from: str | None = None) -> str:
    """The question on screen, once the list and the view agree on it; after an action that
    moves on only once the server has answered (a fix), pass the question it moves from."""
    drawn = page.wait_for_function(
        """(old) => {
          const qid = document.querySelector(".row.current")?.dataset.qid;
          return qid && qid === document.body.dataset.shown && qid !== old && qid;
        }""",
        arg=moved_from,
    )
    return drawn.json_value()


def wait_for(condition: Callable[[], bool], seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def verdicts_in(folder: Path, labeller: str = "tester") -> dict[str, dict]:
    """A labeller's verdicts in the folder's verdict file, by question."""
    return read_verdicts(folder / "review/verdicts.jsonl").of(labeller)


def session_of(url: str) -> str:
    """The token the server wrote into its page (http://127.0.0.1:PORT), as the page reads it."""
    page = urllib.request.urlopen(url, timeout=10).read().decode()
    return re.search(r'const SESSION = "([^"]+)"', page).group(1)


def post(url: str, body: dict | bytes, **headers: str) -> dict:
    """A write as the page sends it (its Origin, JSON, the session's secret), headers changed
    by `headers` (None drops one); the answer's JSON."""
    base = url.split("/api/")[0]
    sent = {
        "Content-Type": "application/json",
        "Origin": base,
        "X-Goldenset-Session": session_of(base),
        **{name.replace("_", "-"): value for name, value in headers.items()},
    }
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(
        url, data, {name: value for name, value in sent.items() if value is not None}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())
