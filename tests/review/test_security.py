"""The review page takes verdicts from its own tab only: a write from another site (a form, a
fetch that needs no preflight), a request naming another host (DNS rebinding) or a write without
the session's secret is refused, and the verdict file is unchanged; the page itself still
writes."""

from __future__ import annotations

import functools
import http.server
import json
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.review.conftest import open_page, post, served, wait_for, write_project
from tests.review.test_page import toy_questions
from tests.support.workers import ON_THE_DEFAULT_PORT

VERDICT = {"qid": "gs-000", "kind": "a"}
FIX = {"qid": "gs-000", "failed": "a", "question": "Que répare la protéine p53?", "confirm": True}


@pytest.fixture
def project(tmp_path) -> Path:
    return write_project(tmp_path / "project", *toy_questions(6))


def _refused(call) -> tuple[int, str]:
    with pytest.raises(urllib.error.HTTPError) as error:
        call()
    return error.value.code, json.loads(error.value.read())["error"]


def test_writes_not_from_the_page_are_refused_and_change_nothing(project):
    verdicts = project / "review/verdicts.jsonl"
    with served(project) as url:
        write = url + "/api/verdict"
        port = url.rsplit(":", 1)[1]
        attempts = {
            "another site": {"Origin": "http://evil.example"},
            "no origin": {"Origin": None},
            "an origin of another port": {"Origin": "http://127.0.0.1:1"},
            "text/plain": {"Content_Type": "text/plain"},
            "a form": {"Content_Type": "application/x-www-form-urlencoded"},
            "no secret": {"X_Goldenset_Session": None},
            "a wrong secret": {"X_Goldenset_Session": "guessed"},
            "another host": {"Host": f"evil.example:{port}"},
        }
        for what, headers in attempts.items():
            code, why = _refused(lambda headers=headers: post(write, VERDICT, **headers))
            assert code == 403 and why.startswith("forbidden: "), what
            assert not verdicts.exists(), what
        for other, body in [("discard", {"qids": ["x"]}), ("fix", FIX)]:  # every write alike
            foreign = functools.partial(post, f"{url}/api/{other}", body, Origin="http://x.ex")
            assert _refused(foreign)[0] == 403, other
        # a name of the attacker's rebound to 127.0.0.1 reads nothing either
        rebound = urllib.request.Request(url + "/api/state", headers={"Host": "evil.example"})
        assert _refused(lambda: urllib.request.urlopen(rebound, timeout=10))[0] == 403
        assert _refused(lambda: post(write, b"{not json"))[0:2] == (
            400,
            "bad request: the body is not JSON",
        )
        assert _refused(lambda: post(write, b"[1]"))[0] == 400
        assert not verdicts.exists()
        # localhost is this server too; and the page's own write goes through
        post(write, VERDICT, Origin=f"http://localhost:{port}", Host=f"localhost:{port}")
        assert json.loads(verdicts.read_text())["failed"] == "a"


ATTACKER = """<!doctype html><html><body>
<form id="form" method="post" action="{url}/api/verdict" enctype="text/plain">
  <input name='{{"qid": "gs-001", "kind": "b", "x": "' value='"}}'>
</form>
<script>
(async () => {{
  const body = JSON.stringify({{qid: "gs-002", kind: "b"}});
  const tries = [
    fetch("{url}/api/verdict", {{method: "POST", mode: "no-cors", body}}),
    fetch("{url}/api/verdict", {{method: "POST", mode: "no-cors", body,
                                 headers: {{"Content-Type": "text/plain"}}}}),
    fetch("{url}/api/verdict", {{method: "POST", body,
                                 headers: {{"Content-Type": "application/json"}}}}),
  ];
  for (const attempt of tries) {{ try {{ await attempt; }} catch (error) {{}} }}
  document.body.dataset.fetched = "true";
}})();
</script></body></html>"""


@contextmanager
def another_site(folder: Path, page: str) -> Iterator[str]:
    """Another local site (its own port, so another origin) serving one page: its URL."""
    folder.mkdir()
    (folder / "index.html").write_text(page)

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(folder), **kwargs)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/index.html"
    finally:
        server.shutdown()
        server.server_close()


def attacker_site(folder: Path, review_url: str):
    """A site whose page tries to write verdicts to the review server: a form post and fetches
    that need no preflight, and one that does."""
    return another_site(folder, ATTACKER.format(url=review_url))


@pytest.mark.slow
def test_a_site_in_the_same_browser_cannot_write_a_verdict(browser, project, tmp_path):
    verdicts = project / "review/verdicts.jsonl"
    with served(project) as url, attacker_site(tmp_path / "site", url) as site:
        page = browser.new_page()
        page.goto(site)
        page.wait_for_selector("body[data-fetched=true]", state="attached", timeout=20_000)
        with page.expect_navigation():
            page.evaluate("document.getElementById('form').submit()")
        assert "forbidden" in page.content()  # the form's post, answered
        assert not verdicts.exists()
        # the page itself still writes, one key a verdict
        own = open_page(browser, url)
        own.keyboard.press("p")
        wait_for(lambda: verdicts.exists())
        assert json.loads(verdicts.read_text())["verdict"] == "pass"


def lines(process: subprocess.Popen, count: int, seconds: float) -> list[str]:
    """The next lines a process prints; after ``seconds`` without them, the process is killed
    and the test fails (rather than the suite hanging)."""
    with ThreadPoolExecutor(1) as pool:
        read = pool.submit(lambda: [process.stdout.readline() for _ in range(count)])
        try:
            return read.result(timeout=seconds)
        except TimeoutError:
            process.kill()  # the reading thread sees the end of the output
            raise AssertionError(f"fewer than {count} lines in {seconds} s") from None


@ON_THE_DEFAULT_PORT
def test_a_taken_default_port_gives_a_free_one_and_says_so(project, tmp_path):
    taken = socket.socket()
    # a page's server that just stopped leaves the port in TIME_WAIT: reused, it is taken here
    taken.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        taken.bind(("127.0.0.1", 8765))
        taken.listen()
    except OSError:
        pass  # taken by something else already: the same case
    env = {
        **__import__("os").environ,
        "PYTHONPATH": str(ROOT / "src"),
        "GOLDENSET_RUNTIME_DIR": str(tmp_path / "runtime"),
    }
    server = subprocess.Popen(
        [sys.executable, "-m", "goldenset", "review", str(project)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        first, second = lines(server, 2, seconds=60)
        assert first.strip() == "review: port 8765 is taken: serving on another"
        url = second.split()[1]  # the page's address, with the session's token
        base, token = url.split("/?token=")
        assert not base.endswith(":8765") and len(token) >= 32
        asked = f"{base}/api/state?token={token}"
        state = json.loads(urllib.request.urlopen(asked, timeout=10).read())
        assert len(state["order"]) == 6
        # `--list` prints the address again, token included, for this user alone
        listed = subprocess.run(
            [sys.executable, "-m", "goldenset", "review", "--list"],
            capture_output=True,
            text=True,
            env=env,
        )
        assert listed.stdout.split() == [url, str(project.resolve())]
        [announced] = (tmp_path / "runtime").glob("*.json")
        assert announced.stat().st_mode & 0o777 == 0o600
    finally:
        server.kill()
        server.wait(10)
        taken.close()
    gone = [sys.executable, "-m", "goldenset", "review", "--list"]
    stopped = subprocess.run(gone, capture_output=True, text=True, env=env)
    assert stopped.returncode == 1 and stopped.stdout.strip() == "review: no review server running"
