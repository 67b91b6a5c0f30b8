"""A real Chroma server on the loopback, for the Chroma adapter's tests.

It is the `chroma run` of the venv (chromadb's wheel ships it), serving a folder of its own, so a
test talks to Chroma over HTTP as a team's pipeline does. CI may start one shared server instead
and name it in GOLDENSET_TEST_CHROMA_URL (:func:`chroma_url_from_env`); tests then use that one.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import IO
from urllib.parse import urlsplit

from tests.support.s3_server import free_port

URL_ENV = "GOLDENSET_TEST_CHROMA_URL"
HEARTBEAT = "/api/v2/heartbeat"
STARTUP_S = 60.0  # a cold start (its Rust binary, a new folder) takes a few seconds on 2 cores


def chroma_url_from_env() -> str | None:
    """The shared test server CI started (e.g. http://127.0.0.1:8765), None when there is none."""
    return os.environ.get(URL_ENV) or None


def host_port(url: str) -> tuple[str, int]:
    """An http URL's host and port, as chromadb.HttpClient takes them."""
    parts = urlsplit(url)
    return parts.hostname or "127.0.0.1", parts.port or 8000


def is_up(url: str, timeout: float = 2.0) -> bool:
    """Whether the server at ``url`` answers its heartbeat."""
    try:
        with urllib.request.urlopen(url + HEARTBEAT, timeout=timeout) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


def chroma_command() -> Path:
    """The venv's `chroma` console script: next to the interpreter running the tests, so the
    server is the chromadb the tests import, whatever is on PATH."""
    script = Path(sys.executable).parent / "chroma"
    if not script.exists():
        raise FileNotFoundError(f"no `chroma` next to {sys.executable}: install chromadb")
    return script


class ChromaServer:
    """`with start_chroma(folder) as server:` serves ``folder`` on 127.0.0.1 until the block
    ends (or :meth:`stop`)."""

    def __init__(self, folder: Path, port: int | None = None) -> None:
        self.folder, self.port = folder, port or free_port()
        self.host = "127.0.0.1"
        self.url = f"http://{self.host}:{self.port}"
        self._process: subprocess.Popen | None = None
        self._log: IO[bytes] | None = None
        self.log_path = folder.parent / f"chroma-{self.port}.log"

    def start(self) -> ChromaServer:
        self.folder.mkdir(parents=True, exist_ok=True)
        command = [str(chroma_command()), "run", "--path", str(self.folder)]
        command += ["--host", self.host, "--port", str(self.port)]
        env = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}  # a test never phones home
        # its log goes to a file: a pipe nobody reads would fill up and block the server
        self._log = self.log_path.open("wb")
        self._process = subprocess.Popen(
            command, env=env, stdout=self._log, stderr=subprocess.STDOUT
        )
        self._wait_until_up()
        return self

    def _wait_until_up(self) -> None:
        deadline = time.monotonic() + STARTUP_S
        while time.monotonic() < deadline:
            code = self._process.poll() if self._process is not None else None
            if code is not None:
                self.stop()
                raise RuntimeError(f"`chroma run` exited ({code}): {self.log}")
            if is_up(self.url, timeout=1.0):
                return
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"Chroma did not answer {self.url}{HEARTBEAT} in {STARTUP_S:.0f} s")

    @property
    def log(self) -> str:
        """The server's output so far (what to read when it did not start)."""
        if not self.log_path.exists():
            return ""
        return self.log_path.read_text(encoding="utf-8", errors="replace")[-2000:]

    def stop(self) -> None:
        """Stop the server and wait for it: its port is closed when this returns."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> ChromaServer:
        return self if self._process is not None else self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def start_chroma(folder: Path, port: int | None = None) -> ChromaServer:
    """A Chroma server serving ``folder``, started and answering its heartbeat."""
    return ChromaServer(folder, port).start()
