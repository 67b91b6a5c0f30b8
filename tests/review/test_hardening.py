"""The review server serves only whoever started it, is never framed, answers every request and
undoes what the reviewer last did: a token for every route, no framing, a 400 for each malformed
request (and the next request served), undo of a repeated verdict."""

from __future__ import annotations

import http.client
import json
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from goldenset.review.server import MAX_BODY, cookie_name
from tests.review.conftest import (
    TOKENS,
    post,
    served,
    session_of,
    verdicts_in,
    with_token,
    write_project,
)
from tests.review.test_page import toy_questions
from tests.review.test_security import another_site


@pytest.fixture
def project(tmp_path) -> Path:
    return write_project(tmp_path / "project", *toy_questions(6))


def status_of(opener: urllib.request.OpenerDirector, request: str | urllib.request.Request):
    """The status and headers a request gets (an error status included)."""
    try:
        with opener.open(request, timeout=10) as answer:
            return answer.status, answer.headers
    except urllib.error.HTTPError as error:
        return error.code, error.headers


def test_every_route_answers_403_without_the_token_and_200_with_it(project):
    with served(project) as url:
        stranger = urllib.request.build_opener()  # no cookie, no token: another local process
        token = TOKENS[url]
        write = urllib.request.Request(
            url + "/api/verdict",
            json.dumps({"qid": "gs-000", "kind": "pass"}).encode(),
            {"Content-Type": "application/json", "Origin": url, "X-Goldenset-Session": token},
        )
        for request in [url + "/", url + "/api/state", url + "/api/query?qid=gs-000", write]:
            status, headers = status_of(stranger, request)
            assert status == 403, request
            assert headers["X-Frame-Options"] == "DENY"
            assert headers["Content-Security-Policy"] == "frame-ancestors 'none'"
        assert verdicts_in(project) == {}
        assert status_of(stranger, f"{url}/api/state?token=wrong{token}")[0] == 403
        # with the token: in the URL, or in the cookie the page's first load set
        assert status_of(stranger, f"{url}/api/state?token={token}")[0] == 200
        status, headers = status_of(stranger, with_token(url))
        assert status == 200 and headers["X-Frame-Options"] == "DENY"
        cookie = headers["Set-Cookie"]
        assert cookie.startswith(f"{cookie_name(int(url.rsplit(':', 1)[1]))}={token};")
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
        assert status_of(urllib.request.build_opener(), url + "/api/state")[0] == 403
        assert post(url + "/api/verdict", {"qid": "gs-000", "kind": "pass"})  # the page's cookie
        assert verdicts_in(project)["gs-000"]["verdict"] == "pass"


def raw(url: str, method: str, path: str, headers: dict[str, str], body: bytes = b"") -> int:
    """A request sent as given, headers and body unchecked by any client; its status, within
    3 s."""
    host, port = url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=3)
    try:
        connection.putrequest(method, path, skip_accept_encoding=True)
        for name, value in headers.items():
            connection.putheader(name, value)
        connection.endheaders(body or None)
        return connection.getresponse().status
    finally:
        connection.close()


def test_each_malformed_request_gets_400_and_the_next_is_served(project):
    with served(project) as url:
        port = int(url.rsplit(":", 1)[1])
        signed = {
            "Host": f"127.0.0.1:{port}",
            "Origin": url,
            "Content-Type": "application/json",
            "X-Goldenset-Session": session_of(url),
            "Cookie": f"{cookie_name(port)}={TOKENS[url]}",
        }
        good = json.dumps({"qid": "gs-000", "kind": "pass"}).encode()
        bodies = {
            "a qid that is a list": {"qid": ["gs-000"], "kind": "pass"},
            "a qid that is an object": {"qid": {"a": 1}, "kind": "pass"},
            "a kind that is a number": {"qid": "gs-000", "kind": 3},
            "a note that is a list": {"qid": "gs-000", "kind": "pass", "note": ["x"]},
            "seconds as text": {"qid": "gs-000", "kind": "pass", "seconds": "ten"},
        }
        for what, body in bodies.items():
            data = json.dumps(body).encode()
            length = {"Content-Length": str(len(data))}
            assert raw(url, "POST", "/api/verdict", {**signed, **length}, data) == 400, what
        fixes = [
            {"qid": ["gs-000"], "failed": "a", "question": "Q?"},
            {"qid": "gs-000", "failed": 1},
        ]
        for body in fixes:
            data = json.dumps(body).encode()
            length = {"Content-Length": str(len(data))}
            assert raw(url, "POST", "/api/fix", {**signed, **length}, data) == 400, body
        discard = json.dumps({"qids": "gs-000"}).encode()
        length = {"Content-Length": str(len(discard))}
        assert raw(url, "POST", "/api/discard", {**signed, **length}, discard) == 400
        for route in ["/api/verdict", "/api/fix", "/api/undo", "/api/discard"]:  # not JSON
            headers = {**signed, "Content-Length": "9"}
            assert raw(url, "POST", route, headers, b"not json!") == 400, route
        lengths = {
            "no Content-Length": {},
            "a negative one": {"Content-Length": "-1"},
            "one past the cap": {"Content-Length": str(MAX_BODY + 1)},
            "not a number": {"Content-Length": "ten"},
        }
        for what, length in lengths.items():
            assert raw(url, "POST", "/api/verdict", {**signed, **length}, good) == 400, what
        started = time.monotonic()
        short = {**signed, "Content-Length": str(len(good) + 50)}  # the body never comes whole
        assert raw(url, "POST", "/api/verdict", short, good) == 400
        assert time.monotonic() - started < 3
        assert verdicts_in(project) == {}  # none of them wrote
        assert raw(url, "GET", "/api/state", signed) == 200  # and the server goes on
        length = {"Content-Length": str(len(good))}
        assert raw(url, "POST", "/api/verdict", {**signed, **length}, good) == 200


def test_undo_takes_back_the_reviewers_last_action(project):
    with served(project) as url:
        verdict = url + "/api/verdict"
        post(verdict, {"qid": "gs-001", "kind": "pass"})
        post(verdict, {"qid": "gs-002", "kind": "a"})
        post(verdict, {"qid": "gs-001", "kind": "pass"})  # the same verdict again
        assert post(url + "/api/undo", {})["qid"] == "gs-001"
        mine = verdicts_in(project)
        assert "gs-001" not in mine and mine["gs-002"]["failed"] == "a"
        # a verdict before the repeated one counts again
        post(verdict, {"qid": "gs-003", "kind": "b"})
        post(verdict, {"qid": "gs-003", "kind": "pass"})
        post(verdict, {"qid": "gs-003", "kind": "pass"})
        post(url + "/api/undo", {})
        assert verdicts_in(project)["gs-003"]["failed"] == "b"


FRAMING = """<!doctype html><html><body>
<iframe id="frame" src="{url}" onload="document.body.dataset.loaded = 'true'"></iframe>
</body></html>"""


@pytest.mark.slow
def test_a_page_on_another_origin_cannot_frame_the_review_page(browser, project, tmp_path):
    with served(project) as url:
        # even with the token in hand, the framing site gets no page in its frame
        framing = FRAMING.format(url=with_token(url))
        with another_site(tmp_path / "site", framing) as site:
            page = browser.new_page()
            page.goto(site)
            page.wait_for_selector("body[data-loaded=true]", state="attached", timeout=20_000)
            [framed] = [frame for frame in page.frames if frame != page.main_frame]
            assert framed.query_selector("#question") is None
            assert not framed.url.startswith(url)  # the browser's error page instead
