"""The Chroma server the store tests share: CI's (GOLDENSET_TEST_CHROMA_URL), else one of their
own for the module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.chroma_server import chroma_url_from_env, host_port, start_chroma

pytest.register_assert_rewrite("tests.retrieval.stores.store_checks")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    """CI's shared server, else one of our own for the module: (host, port)."""
    shared = chroma_url_from_env()
    if shared:
        yield host_port(shared)
        return
    with start_chroma(tmp_path_factory.mktemp("chroma") / "db") as own:
        yield own.host, own.port
