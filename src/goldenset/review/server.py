"""`goldenset review`: the review page on 127.0.0.1, and the JSON API it calls.

The page (page.html, one file: no script, style or font from the internet) asks for the state
once, then for one query at a time, and posts each verdict; the server reads the pipeline's
files once at start and writes only the verdict file (goldenset.review.verdicts).

A page on 127.0.0.1 is still reachable from any local process or user, and from any site the
person's browser opens, which may post to it (a form, or a "simple" fetch that needs no
preflight), frame it, or rebind a name of its own to 127.0.0.1. So, as a local notebook server
does: every request must name this server as its Host (127.0.0.1 or localhost, this port) and
carry the session's token, in the URL `goldenset review` prints (`?token=`) or in the cookie the
first load sets (HttpOnly, SameSite=Strict); a write must also come as application/json from the
page's own Origin with the token in a header, which the server writes into the page it serves.
No response may be framed, and every request is answered: a malformed one with 400.
"""

from __future__ import annotations

import contextlib
import json
import logging
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from http import HTTPStatus
from http.cookies import CookieError, SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pandas as pd

from goldenset.core import paths
from goldenset.core.errors import GoldensetError
from goldenset.core.files import read_jsonl
from goldenset.core.params import ReviewParams
from goldenset.corpus.queries import FIXED_FROM
from goldenset.corpus.querysets import QUERY_SETS
from goldenset.corpus.verdicts import (
    FIXABLE,
    CarriedOver,
    Verdicts,
    carry_over,
    checked_line,
    labeller_of,
    seconds_problem,
    share_line,
)
from goldenset.review.fixes import fix_warnings, fixed_version
from goldenset.review.pass_shares import person_estimate
from goldenset.review.queue import review_order
from goldenset.review.verdicts import VerdictFile, agreements, verdict_row
from goldenset.review.views import Document, missed, query_view, ranked_view
from goldenset.scoring.reviewed import read_reasked

log = logging.getLogger("goldenset")
CONTEXT_CHARS = 4000  # of the document either side of the evidence
SHOWN = 5  # passages of each retriever in the misses view
RULE = [  # labels/RULE.md, short
    "pass: its evidence sentence itself answers it, and it names its subject well enough to "
    "find its document",
    "a: not answered by the evidence (an added premise, a why or how the sentence does not give, "
    "an aim or method it does not state)",
    "b: not specific enough to find its document ('a certain gene', 'the study', 'they')",
    "both: a and b · nonsense: a meaningless query",
]


@dataclass
class Project:
    """The pipeline's files a review reads, read once: the golden set, its documents, the
    judge's readings (the audit's), the retrievers' results and the chunks."""

    root: Path
    params: ReviewParams
    labeller: str
    blind: bool = False  # others' verdicts and the agreement with them hidden

    def __post_init__(self) -> None:
        self.golden_read = _fingerprint(self.root / paths.GOLDENSET)
        self._fixed_as: tuple[tuple[int, int] | None, dict[str, str]] = (None, {})

    def read_again_if_changed(self) -> None:
        """After `dvc repro` wrote a new golden set: forget what was read of the old one, so
        the next request reads the pipeline's files anew (a page loaded before shows a line)."""
        now = _fingerprint(self.root / paths.GOLDENSET)
        if now != self.golden_read:
            for name in _READ_ONCE:
                self.__dict__.pop(name, None)
            self.golden_read = now

    @cached_property
    def reasked(self) -> set[str]:
        """The questions a person failed that generate asked again: the share counts them."""
        return read_reasked(self.root)

    def carried(self, verdicts: Verdicts) -> CarriedOver:
        """The verdicts as they apply to the questions written now (carry_over)."""
        return carry_over(verdicts, self.queries.values(), self.reasked)

    @cached_property
    def queries(self) -> dict[str, dict]:
        rows = read_jsonl(self.root / paths.GOLDENSET)
        return {row["qid"]: {**row, "doc_id": str(row["doc_id"])} for row in rows}

    @property
    def fixed_as(self) -> dict[str, str]:
        """original qid -> the qid its fix is scored under, as the last `dvc repro` applied it
        (read again when it changed: a repro during a review leaves the written set alone)."""
        path = self.root / paths.APPLIED
        now = _fingerprint(path)
        if self._fixed_as[0] != now:
            rows = read_jsonl(path) if now else []
            fixed = {row[FIXED_FROM]: row["qid"] for row in rows if row.get(FIXED_FROM)}
            self._fixed_as = (now, fixed)
        return self._fixed_as[1]

    @cached_property
    def documents(self) -> dict[str, Document]:
        frame = pd.read_parquet(self.root / paths.DOCUMENTS, columns=["doc_id", "title", "text"])
        wanted = {row["doc_id"] for row in self.queries.values()}
        frame = frame[frame["doc_id"].astype(str).isin(wanted)]
        return {
            str(doc): Document(str(title or doc), text)
            for doc, title, text in frame.itertuples(index=False)
        }

    @cached_property
    def judge_probabilities(self) -> dict[str, dict[str, float]]:
        """qid -> the judge's probability per criterion, for the questions the audit read."""
        path = self.root / paths.JUDGE_PROBABILITIES
        if not path.exists():
            return {}
        frame = pd.read_parquet(path)
        return {row.pop("qid"): row for row in frame.to_dict("records")}

    @cached_property
    def results(self) -> pd.DataFrame:
        path = self.root / paths.RESULTS
        if not path.exists():
            return pd.DataFrame(columns=["query_set", "retriever", "qid", "first_relevant_rank"])
        frame = pd.read_parquet(path)
        [name] = [entry.name for entry in QUERY_SETS.values() if entry.golden]
        golden = frame[frame["query_set"] == name]
        return golden[golden["qid"].isin(self.queries.keys())]

    @cached_property
    def chunks(self) -> pd.DataFrame:
        path = self.root / paths.CHUNKS
        if not path.exists():
            return pd.DataFrame(columns=["doc_id", "start", "end", "text"])
        frame = pd.read_parquet(path, columns=["chunk_id", "doc_id", "start", "end", "text"])
        return frame.set_index("chunk_id")

    @cached_property
    def order(self) -> list[tuple[str, str]]:
        passes = {qid: probs["pass"] for qid, probs in self.judge_probabilities.items()}
        return review_order(list(self.queries), passes, self.params.sample, self.params.seed)

    @cached_property
    def drawn(self) -> dict[str, str]:
        return dict(self.order)

    @cached_property
    def verdict_file(self) -> VerdictFile:
        return VerdictFile(self.root / self.params.verdicts_path)

    def check(self) -> None:
        if not (self.root / paths.GOLDENSET).exists():
            raise GoldensetError(
                f"{self.root / paths.GOLDENSET} not found: run `dvc repro generate` first"
            )
        if not self.queries:
            raise GoldensetError(f"{self.root / paths.GOLDENSET} holds no question to review")


_READ_ONCE = [name for name, value in vars(Project).items() if isinstance(value, cached_property)]


def summary(project: Project, verdicts: Verdicts) -> dict:
    """What the page shows of the file: the labeller's verdict on each question, their random
    sample's pass share (as first drawn: a failed question asked again still counts, and the
    share of the set as it is now beside it), the malformed lines; unless blind, the others'
    verdicts and the agreement with them."""
    qids = set(project.queries)
    carried = project.carried(verdicts)
    verdicts = carried.verdicts
    mine = verdicts.only(project.labeller)
    share = person_estimate(mine, qids, project.reasked, project.params)
    estimate = checked_line(share) if share["checked"] else "no verdict yet"
    if "golden" in share:
        golden = share["golden"]
        estimate += f" · kept {golden['passed']}, {golden['fixed']} of them fixed"
    if "now" in share:
        estimate += f" · as the set is now: {share_line(share['now'])}"
    shown = {
        "verdicts": {qid: _kind(row) for (qid, _), row in mine.latest.items() if qid in qids},
        "estimate": estimate,
        "problems": verdicts.problems,
        "others": {},
        "agreement": [],
        "golden": str(project.golden_read),  # a page that loaded another set says so
        "stale": [_stale(row) for row in carried.stale if labeller_of(row) == project.labeller],
    }
    if not project.blind:
        theirs = [row for row in verdicts.latest.values() if labeller_of(row) != project.labeller]
        for row in theirs:
            shown["others"].setdefault(row["qid"], []).append(f"{labeller_of(row)}: {_kind(row)}")
        shown["agreement"] = [
            agreement.line()
            for agreement in agreements(verdicts.among(qids | project.reasked))
            if project.labeller in agreement.labellers
        ]
    return shown


def _kind(row: dict) -> str:
    return "fixed" if row.get("fix") else row["failed"] or "pass"


def _stale(row: dict) -> dict:
    """A stale verdict as the page lists it: its question as it was, and what was said."""
    return {"qid": row["qid"], "question": row.get("question") or "", "kind": _kind(row)}


def _fingerprint(path: Path) -> tuple[int, int] | None:
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    return stat.st_mtime_ns, stat.st_size


def state(project: Project) -> dict:
    project.read_again_if_changed()
    return {
        "order": [[qid, drawn, project.queries[qid]["question"]] for qid, drawn in project.order],
        "retrievers": project.results["retriever"].unique().tolist(),  # as scored
        "file": str(project.params.verdicts_path),
        "labeller": project.labeller,
        "blind": project.blind,
        "rule": RULE,
        **summary(project, project.verdict_file.read()),
    }


def query(project: Project, qid: str) -> dict:
    row = project.queries[qid]
    view = query_view(row, project.documents[row["doc_id"]], CONTEXT_CHARS)
    fixed_as = project.fixed_as.get(qid)  # the qid its fix is scored under
    return {**view, "judge": project.judge_probabilities.get(qid), "fixed_as": fixed_as}


def miss(project: Project, qid: str, retrievers: list[str]) -> dict:
    row = project.queries[qid]
    results = project.results[project.results["qid"] == qid].set_index("retriever")
    ranked = {
        name: ranked_view(
            results.loc[name] if name in results.index else None, row, project.chunks, SHOWN
        )
        for name in retrievers
    }
    return {**query(project, qid), "ranked": ranked}


def record(project: Project, body: dict) -> dict:
    qid = text_of(body, "qid")
    row = verdict_row(
        project.queries[qid],
        text_of(body, "kind"),
        _note(body),
        project.labeller,
        project.drawn[qid],
        seconds=_seconds(body),
    )
    return summary(project, project.verdict_file.record(row, again=True))


def fix(project: Project, body: dict) -> dict:
    """A person's version of a query, recorded as a fail of the original (body: qid, failed: a,
    b or both, question, and the evidence's evidence_start and evidence_end in the document,
    else the original's; note, seconds). The writer's validation is run on it: with a warning,
    nothing is written unless the body says `confirm`, and the page asks the person first."""
    qid = text_of(body, "qid")
    query = project.queries[qid]
    if text_of(body, "failed") not in FIXABLE:
        raise ValueError(f"a fix mends a query failed for {', '.join(FIXABLE)}")
    document = project.documents[query["doc_id"]].text
    start = body.get("evidence_start", query.get("evidence_start"))
    end = body.get("evidence_end", query.get("evidence_end"))
    text = body["question"]
    if not isinstance(text, str) or not all(_whole(at) for at in (start, end)):
        raise ValueError("a fix is a question's text and its evidence's whole-number offsets")
    version = fixed_version(text, document, int(start), int(end))
    warnings = fix_warnings(version, document, query.get("form"))
    if warnings and body.get("confirm") is not True:
        return {"saved": False, "warnings": warnings, "fix": version}
    row = verdict_row(
        query,
        body["failed"],
        _note(body),
        project.labeller,
        project.drawn[qid],
        fix=version,
        seconds=_seconds(body),
    )
    shown = summary(project, project.verdict_file.record(row, again=True))
    return {**shown, "saved": True, "warnings": warnings, "fix": version}


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _note(body: dict) -> str:
    """The person's note on a verdict ("" without one)."""
    return text_of(body, "note") if "note" in body else ""


def _seconds(body: dict) -> float | None:
    """The seconds the page measured for a verdict (None: not measured)."""
    if problem := seconds_problem(body.get("seconds")):
        raise ValueError(problem)
    return body.get("seconds")


def discard(project: Project, body: dict) -> dict:
    """The labeller's stale verdicts named in the body taken out of the file (only those still
    stale: a verdict on a question written now stays)."""
    stale = project.carried(project.verdict_file.read()).stale
    chosen = {row["qid"] for row in stale if labeller_of(row) == project.labeller}
    named = body.get("qids") or []
    if not isinstance(named, list) or not all(isinstance(qid, str) for qid in named):
        raise ValueError("qids is a list of question ids")
    chosen &= set(named)
    return summary(project, project.verdict_file.discard(project.labeller, chosen))


def undo(project: Project, body: dict) -> dict:
    """The labeller's last change taken back, through the file (so also one made before a
    reload); the question it was of, for the page to show (None: nothing to undo)."""
    verdicts, qid = project.verdict_file.undo(project.labeller)
    return {**summary(project, verdicts), "qid": qid}


SESSION_HEADER = "X-Goldenset-Session"  # the page sends the session's token with every write
SESSION_MARK = b"__GOLDENSET_SESSION__"  # where page.html takes it
MAX_BODY = 1 << 20  # bytes a write's body may hold: a verdict is a few hundred
SOCKET_SECONDS = 1.0  # a body shorter than its Content-Length is answered 400 after this
NO_FRAMING = {"X-Frame-Options": "DENY", "Content-Security-Policy": "frame-ancestors 'none'"}


def cookie_name(port: int) -> str:
    """The session cookie's name: one a port, as a browser keeps one jar for every port."""
    return f"goldenset-review-{port}"


def has_token(headers: Mapping[str, str], query: Mapping[str, str], port: int, token: str) -> bool:
    """True when the request carries the session's token: in its URL, or in its cookie."""
    jar = SimpleCookie()
    with contextlib.suppress(CookieError):  # a malformed cookie carries no token
        jar.load(headers.get("Cookie") or "")
    cookie = jar.get(cookie_name(port))
    given = [query.get("token") or "", cookie.value if cookie else ""]
    return any(secrets.compare_digest(value.encode(), token.encode()) for value in given if value)


def refusal(
    headers: Mapping[str, str], port: int, token: str, write: bool, token_given: bool
) -> str | None:
    """Why a request may not be served, or None: a Host that is not this server, no session
    token (token_given: has_token), or a write not from this page (its Origin, as JSON, with the
    token in SESSION_HEADER)."""
    own = {f"127.0.0.1:{port}", f"localhost:{port}"}
    if headers.get("Host") not in own:
        return "a request for another host: open the page at http://127.0.0.1:" + str(port)
    if not token_given:
        return "no session token: open the address `goldenset review` printed, with its ?token="
    if not write:
        return None
    if headers.get("Origin") not in {f"http://{host}" for host in own}:
        return "a write from another page: verdicts are given on the review page itself"
    if (headers.get("Content-Type") or "").split(";")[0].strip() != "application/json":
        return "a write that is not JSON"
    if not secrets.compare_digest((headers.get(SESSION_HEADER) or "").encode(), token.encode()):
        return "a write without this session's token: reload the page"
    return None


def handler(project: Project, token: str) -> type[BaseHTTPRequestHandler]:
    page = resources.files("goldenset.review").joinpath("page.html").read_bytes()
    page = page.replace(SESSION_MARK, token.encode())

    class Handler(BaseHTTPRequestHandler):
        timeout = SOCKET_SECONDS  # a client that stops sending is answered, not waited for

        def do_GET(self) -> None:
            url = urlparse(self.path)
            ask = {key: values[0] for key, values in parse_qs(url.query).items()}
            if self._refused(write=False, query=ask):
                return
            routes = {
                "/api/state": lambda: state(project),
                "/api/query": lambda: query(project, text_of(ask, "qid")),
                "/api/misses": lambda: {"qids": missed(project.results, ask["retriever"])},
                "/api/miss": lambda: miss(
                    project, text_of(ask, "qid"), ask["retrievers"].split(",")
                ),
            }
            if url.path in ("/", "/index.html"):
                # the URL's token becomes the page's cookie: the page's own reads carry it
                cookie = f"{cookie_name(self._port)}={token}; HttpOnly; SameSite=Strict; Path=/"
                self._send(HTTPStatus.OK, page, "text/html; charset=utf-8", cookie)
            elif url.path in routes:
                self._answer(routes[url.path])
            else:
                self._send(HTTPStatus.NOT_FOUND, b"not found", "text/plain")

        def do_POST(self) -> None:
            if self._refused(write=True, query={}):
                return
            routes = {
                "/api/verdict": record,
                "/api/fix": fix,
                "/api/undo": undo,
                "/api/discard": discard,
            }
            if self.path in routes:
                self._answer(lambda: routes[self.path](project, self._body()))
            else:
                self._send(HTTPStatus.NOT_FOUND, b"not found", "text/plain")

        @property
        def _port(self) -> int:
            return self.server.server_address[1]

        def _refused(self, write: bool, query: Mapping[str, str]) -> bool:
            given = has_token(self.headers, query, self._port, token)
            why = refusal(self.headers, self._port, token, write, given)
            if why is not None:
                log.warning(
                    "review: refused %s %s: %s", self.command, urlparse(self.path).path, why
                )
                payload = json.dumps({"error": f"forbidden: {why}"}).encode()
                self._send(HTTPStatus.FORBIDDEN, payload, "application/json")
            return why is not None

        def _body(self) -> dict:
            try:
                length = int(self.headers.get("Content-Length") or "")
            except ValueError:
                raise ValueError("a write needs a Content-Length") from None
            if not 0 <= length <= MAX_BODY:
                raise ValueError(f"a Content-Length of {length}: 0 to {MAX_BODY} bytes")
            try:
                data = self.rfile.read(length)
            except TimeoutError:
                raise ValueError("the body is shorter than its Content-Length") from None
            if len(data) < length:
                raise ValueError("the body is shorter than its Content-Length")
            try:
                body = json.loads(data or b"{}")
            except (json.JSONDecodeError, UnicodeDecodeError):
                raise ValueError("the body is not JSON") from None
            if not isinstance(body, dict):
                raise ValueError("the body is not a JSON object")
            return body

        def _answer(self, make) -> None:
            try:
                payload, status = make(), HTTPStatus.OK
            except (KeyError, ValueError, TypeError) as error:
                payload, status = {"error": f"bad request: {error}"}, HTTPStatus.BAD_REQUEST
            self._send(status, json.dumps(payload, ensure_ascii=False).encode(), "application/json")

        def _send(self, status: HTTPStatus, data: bytes, kind: str, cookie: str = "") -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Content-Type-Options", "nosniff")
            for name, value in NO_FRAMING.items():
                self.send_header(name, value)
            if cookie:
                self.send_header("Set-Cookie", cookie)
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            # the request line may hold the token: the path alone is logged
            log.debug("review: %s %s", self.command, urlparse(self.path).path)

    return Handler


def text_of(body: Mapping, name: str) -> str:
    """A request's field that must be text; ValueError (a 400) for anything else."""
    value = body[name]
    if not isinstance(value, str):
        raise ValueError(f"{name} is {type(value).__name__}, not text")
    return value


class ReviewServer(ThreadingHTTPServer):
    """The review server with its session token; `url` is the address to open, token included."""

    token: str

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/?token={self.token}"


def serve(project: Project, port: int, *, or_free: bool = False) -> ReviewServer:
    """The review server on 127.0.0.1:port (0: a free one; or_free: a free one when port is
    taken), not yet serving; each server a token of its own. Temporary files a killed server
    left beside the verdict file are removed first."""
    project.check()
    project.verdict_file.remove_leftovers()
    token = secrets.token_urlsafe(24)
    made = handler(project, token)
    try:
        server = ReviewServer(("127.0.0.1", port), made)
    except OSError as error:
        if not or_free:
            raise GoldensetError(
                f"cannot serve on 127.0.0.1:{port} ({error.strerror}): choose another with --port"
            ) from None
        server = ReviewServer(("127.0.0.1", 0), made)
    server.token = token
    return server
