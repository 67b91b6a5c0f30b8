"""A loopback S3 server (moto in server mode) with one empty bucket, for DVC remotes in tests.

DVC reaches it through its real S3 plugin (dvc-s3, boto3 underneath) over HTTP; the credentials
are moto's fake ones, passed only through the environment of the dvc subprocesses.
"""

from __future__ import annotations

import logging
import socket
from pathlib import Path

BUCKET = "goldenset-remote"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class LoopbackS3:
    """`with LoopbackS3(tmp) as s3:` serves S3 on 127.0.0.1 until the block ends."""

    def __init__(self, scratch: Path) -> None:
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        # never a real account: fake keys, and no shared config or credentials file is read
        self.env = {
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_CONFIG_FILE": str(scratch / "no-aws-config"),
            "AWS_SHARED_CREDENTIALS_FILE": str(scratch / "no-aws-credentials"),
        }

    def __enter__(self) -> LoopbackS3:
        import boto3
        from moto.server import ThreadedMotoServer

        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one log line per request
        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=self.port, verbose=False)
        self._server.start()
        client = boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
            region_name="us-east-1",
        )
        client.create_bucket(Bucket=BUCKET)
        self.client = client
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.stop()

    def object_count(self, prefix: str = "") -> int:
        pages = self.client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix)
        return sum(page.get("KeyCount", 0) for page in pages)

    def add_remote(self, project: Path, name: str, path: str, run) -> None:
        """`dvc remote add -d` for s3://BUCKET/path, pointed at this server (endpointurl is no
        secret, so it goes into the tracked .dvc/config and every clone finds the remote)."""
        run(["dvc", "remote", "add", "-d", name, f"s3://{BUCKET}/{path}"], project)
        run(["dvc", "remote", "modify", name, "endpointurl", self.endpoint], project)
