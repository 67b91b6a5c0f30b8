"""A throwaway PostgreSQL cluster for tests: initdb into a fresh temporary folder, a server on a
free loopback port (its unix socket in that folder), stopped and deleted when done.

TCP connections need the password (scram-sha-256), as a real server's do, so the DSN carries a
secret the store adapter must never show. PostgreSQL refuses to run as root: as root the cluster
runs as an unprivileged user (``postgres`` when it exists, else ``nobody``) owning its folder.

CI starts one for the whole run (.ci/run) and exports its DSN as GOLDENSET_TEST_POSTGRES_DSN;
tests use it when set, and start their own otherwise (from the repository's root)::

    python -m tests.support.postgres_server start    # prints the DSN, then the folder
    python -m tests.support.postgres_server stop FOLDER
"""

from __future__ import annotations

import atexit
import glob
import os
import pwd
import re
import secrets
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.support.s3_server import free_port

DSN_ENV = "GOLDENSET_TEST_POSTGRES_DSN"
USER = DATABASE = "goldenset"
# a throwaway cluster: nothing needs to survive a crash, so no flush waits
FAST = "-c fsync=off -c full_page_writes=off -c synchronous_commit=off"


def server_bin() -> Path:
    """The folder of initdb, pg_ctl and createdb: PATH's initdb, else the newest Debian one."""
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent
    candidates = glob.glob("/usr/lib/postgresql/*/bin/initdb")
    if not candidates:
        raise RuntimeError(
            "no initdb: install PostgreSQL's server (Debian: apt-get install postgresql)"
        )
    newest = max(candidates, key=lambda path: [int(n) for n in re.findall(r"\d+", path)])
    return Path(newest).parent


def owner() -> str | None:
    """Who runs the cluster: None for the current user, unless that is root."""
    if os.geteuid() != 0:
        return None
    for name in ["postgres", "nobody"]:
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            continue
    raise RuntimeError("running as root, and no user 'postgres' or 'nobody' to run PostgreSQL as")


def run(argv: list[str], folder: Path) -> None:
    """A PostgreSQL tool as the cluster's owner, from its folder (root's cwd may be closed to
    it); its output in the error when it fails."""
    user = owner()
    if user is not None:
        argv = (
            ["runuser", "-u", user, "--", *argv]
            if shutil.which("runuser")
            else ["su", "-s", "/bin/sh", user, "-c", shlex.join(argv)]
        )
    done = subprocess.run(argv, cwd=folder, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{Path(argv[0]).name} failed: {(done.stdout + done.stderr).strip()}")


class PostgresServer:
    """A cluster in ``folder`` serving on 127.0.0.1:``port``; ``with`` stops it, as does exit."""

    def __init__(self, folder: Path, port: int, password: str) -> None:
        self.folder, self.port, self.password = folder, port, password
        self.dsn = f"postgresql://{USER}:{password}@127.0.0.1:{port}/{DATABASE}"

    def __enter__(self) -> PostgresServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def stop(self) -> None:
        stop_cluster(self.folder)


def stop_cluster(folder: Path) -> None:
    """Stop the cluster in ``folder`` (if it runs) and delete the folder; twice is harmless."""
    if (folder / "data" / "postmaster.pid").exists():
        pg_ctl = str(server_bin() / "pg_ctl")
        run([pg_ctl, "-D", str(folder / "data"), "-m", "immediate", "-w", "stop"], folder)
    shutil.rmtree(folder, ignore_errors=True)


def start_postgres(stop_at_exit: bool = True) -> PostgresServer:
    """A new cluster, ready for connections, with an empty database ``goldenset``."""
    folder = Path(tempfile.mkdtemp(prefix="goldenset-postgres-"))
    try:
        server = _start(folder)
    except BaseException:
        stop_cluster(folder)
        raise
    if stop_at_exit:
        atexit.register(server.stop)
    return server


def _start(folder: Path) -> PostgresServer:
    tools, user, password = server_bin(), owner(), secrets.token_urlsafe(16)
    (folder / "password").write_text(password)
    if user is not None:
        entry = pwd.getpwnam(user)
        for path in [folder, folder / "password"]:
            os.chown(path, entry.pw_uid, entry.pw_gid)
    data = str(folder / "data")
    run(
        [str(tools / "initdb"), "-D", data, "-U", USER, f"--pwfile={folder / 'password'}"]
        + ["-E", "UTF8", "--locale=C", "--no-sync", "--auth-local=trust"]
        + ["--auth-host=scram-sha-256"],
        folder,
    )
    for attempt in range(3):  # another process may take the free port before the server does
        port = free_port()
        options = f"-c listen_addresses=127.0.0.1 -p {port} -k {folder} {FAST}"
        try:
            run(
                [str(tools / "pg_ctl"), "-D", data, "-l", f"{folder}/log", "-o", options]
                + ["-w", "-t", "60", "start"],
                folder,
            )
            break
        except RuntimeError:
            if attempt == 2:
                raise RuntimeError((folder / "log").read_text(errors="replace")) from None
    createdb = [str(tools / "createdb"), "-h", str(folder), "-p", str(port), "-U", USER, DATABASE]
    run(createdb, folder)
    return PostgresServer(folder, port, password)


def main(argv: list[str]) -> int:
    if argv[:1] == ["start"]:
        server = start_postgres(stop_at_exit=False)  # the caller stops it: `stop FOLDER`
        print(server.dsn, server.folder, sep="\n")
        return 0
    if argv[:1] == ["stop"] and len(argv) == 2:
        stop_cluster(Path(argv[1]))
        return 0
    print(__doc__.split("::")[-1].rstrip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
