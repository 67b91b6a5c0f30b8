"""The PostgreSQL store against a real server (tests.support.postgres_server, or CI's shared
cluster, GOLDENSET_TEST_POSTGRES_DSN): its default full-text search ranks as ts_rank does, it
lists every chunk, each fault is one line naming what to check, and the connection string (a
secret) appears in no message."""

from __future__ import annotations

import os
import re
import socket
import time
import uuid
from collections.abc import Iterator

import pytest

from goldenset.core.errors import GoldensetError
from goldenset.retrieval.retrievers.base import RETRIEVERS, stores
from goldenset.retrieval.stores.base import (
    Hit,
    ask_store,
    listed_chunks,
    query_encoder,
    store_loader,
)
from goldenset.retrieval.stores.postgres import PostgresParams, PostgresStore, open_postgres
from tests.support.postgres_server import DSN_ENV, start_postgres
from tests.support.s3_server import free_port

psycopg = pytest.importorskip("psycopg")

ENV = "GOLDENSET_POSTGRES_DSN"
SECRET = "s3cret-Pa55word"
# (chunk_id, doc_id, text, start, end): the question's words are spread so that no two chunks
# holding any of them tie on ts_rank (one order to check; the test asserts it)
ROWS = [
    ("a-0", "paris", "Paris is the capital of France and the capital of French fashion.", 0, 66),
    ("a-1", "paris", "France borders Spain, Italy and Germany.", 67, 107),
    ("b-0", "berlin", "Berlin is the capital of Germany; its capital district is Mitte.", 0, 65),
    ("b-1", "berlin", "Germany brews beer.", 66, 85),
    ("c-0", "tomato", "Tomatoes grow best in warm weather.", 0, 35),
]
QUESTION = "What is the capital of France?"


@pytest.fixture(scope="session")
def cluster_dsn() -> Iterator[str]:
    """CI's shared cluster, else one of our own for the session."""
    shared = os.environ.get(DSN_ENV)
    if shared:
        yield shared
        return
    with start_postgres() as server:
        yield server.dsn


@pytest.fixture(scope="module")
def dsn(cluster_dsn: str) -> Iterator[str]:
    """A database of its own in the cluster (a shared one holds other tests' tables), with the
    table `chunks` of ROWS."""
    from psycopg.conninfo import make_conninfo

    name = f"goldenset_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(cluster_dsn, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    own = make_conninfo(cluster_dsn, dbname=name)
    make_chunks(own)
    yield own
    with psycopg.connect(cluster_dsn, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE {name} WITH (FORCE)")


def make_chunks(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as connection:
        connection.execute(
            'CREATE TABLE chunks (chunk_id text, doc_id text, text text, start int, "end" int)'
        )
        connection.cursor().executemany("INSERT INTO chunks VALUES (%s, %s, %s, %s, %s)", ROWS)


@pytest.fixture
def store(dsn: str, monkeypatch: pytest.MonkeyPatch) -> PostgresStore:
    monkeypatch.setenv(ENV, dsn)
    return open_postgres(PostgresParams(enabled=True))


def fault(settings: PostgresParams) -> str:
    """The one line opening or asking the store fails with; it never holds the secret."""
    with pytest.raises(GoldensetError) as raised:
        store = open_postgres(settings)
        store.search([QUESTION], 3)
        store.chunks()
    message = str(raised.value)
    dsn = os.environ.get(settings.dsn_env, "").strip()
    assert "\n" not in message and SECRET not in message and (not dsn or dsn not in message)
    return message


def independent_ranks(dsn: str, question: str) -> list[tuple[str, float]]:
    """ts_rank of each chunk holding any word of the question, the OR query built here, in
    Python, not by the store's SQL."""
    words = " | ".join(re.findall(r"\w+", question))
    with psycopg.connect(dsn) as connection:
        rows = connection.execute(
            "SELECT chunk_id, ts_rank(to_tsvector('english', text), to_tsquery('english', %s)) "
            "FROM chunks WHERE to_tsvector('english', text) @@ to_tsquery('english', %s)",
            [words, words],
        ).fetchall()
    return sorted(rows, key=lambda row: -row[1])


def test_it_is_a_registered_store_off_by_default():
    entry = RETRIEVERS["postgres"]
    assert "postgres" in stores() and entry.model_free and entry.params is PostgresParams
    assert not PostgresParams().enabled
    assert "{table}" in PostgresParams().query and "%(query)s" in PostgresParams().query


@pytest.mark.slow
def test_full_text_search_ranks_the_chunks_holding_any_word_by_ts_rank(store, dsn):
    expected = independent_ranks(dsn, QUESTION)
    assert len({score for _, score in expected}) == len(expected) == 3  # no tie: one order
    [hits, none] = store.search([QUESTION, "zebra quantum"], 10)
    assert [(hit.chunk_id, hit.score) for hit in hits] == [
        (chunk_id, pytest.approx(score)) for chunk_id, score in expected
    ]
    assert none == []
    by_id = {row[0]: row for row in ROWS}
    assert all((h.chunk_id, h.doc_id, h.text, h.start, h.end) == by_id[h.chunk_id] for h in hits)
    # k cuts the list, best first; a batch answers each question in order
    first, second = store.search([QUESTION, "Which country brews beer?"], 2)
    assert [hit.chunk_id for hit in first] == [chunk_id for chunk_id, _ in expected[:2]]
    assert [hit.chunk_id for hit in second] == ["b-1"]
    assert "PostgreSQL" in store.described and "127.0.0.1" in store.described


@pytest.mark.slow
def test_it_lists_every_row_unless_its_list_query_is_empty(store, dsn, monkeypatch):
    listed = store.chunks()
    assert sorted((h.chunk_id, h.doc_id, h.text, h.start, h.end) for h in listed) == ROWS
    assert all(hit.score is None for hit in listed)
    assert open_postgres(PostgresParams(list_query="")).chunks() is None


@pytest.mark.slow
def test_a_table_of_other_column_names_is_read_through_its_query(dsn, monkeypatch):
    """Only the document id and the text are required: doc_id_key names the id's column. A
    query without LIMIT still answers k passages."""
    monkeypatch.setenv(ENV, dsn)
    with psycopg.connect(dsn, autocommit=True) as connection:
        connection.execute("CREATE TABLE passages (source text, body text, n int)")
        connection.execute(
            "INSERT INTO passages VALUES ('paris', 'Paris is in France.', 7), ('rome', 'Rome.', 8)"
        )
    query = "SELECT source, body AS text, n AS chunk_id FROM {table} ORDER BY n"
    settings = PostgresParams(table="passages", query=query, doc_id_key="source")
    [[hit]] = open_postgres(settings).search([QUESTION], 1)
    assert hit == Hit("paris", "Paris is in France.", None, None, None, "7")


@pytest.mark.slow
def test_a_vector_query_gets_each_question_embedded_by_its_model(dsn, monkeypatch):
    """pgvector's query, without pgvector: the same inner product over float8[] columns."""
    import numpy as np

    model = "sentence-transformers/all-MiniLM-L6-v2"
    encode = query_encoder(model)
    vectors = encode([text for _, _, text, _, _ in ROWS])
    with psycopg.connect(dsn, autocommit=True) as connection:
        connection.execute(
            "CREATE TABLE vectors (chunk_id text, doc_id text, text text, v float8[])"
        )
        connection.cursor().executemany(
            "INSERT INTO vectors VALUES (%s, %s, %s, %s)",
            [
                (*row[:3], [float(x) for x in vector])
                for row, vector in zip(ROWS, vectors, strict=True)
            ],
        )
    monkeypatch.setenv(ENV, dsn)
    inner = "(SELECT sum(a * b) FROM unnest(v, %(embedding)s::float8[]) AS pair (a, b))"
    query = f"SELECT *, {inner} AS score FROM {{table}} ORDER BY score DESC LIMIT %(k)s"
    store = open_postgres(PostgresParams(table="vectors", query=query, model=model))
    questions = [QUESTION, "Which country brews beer?"]
    for hits, question in zip(store.search(questions, 3), encode(questions), strict=True):
        scores = vectors @ question
        expected = [ROWS[i][0] for i in np.argsort(-scores)[:3]]
        assert [hit.chunk_id for hit in hits] == expected
        assert [hit.score for hit in hits] == pytest.approx(sorted(scores)[::-1][:3], abs=1e-5)


@pytest.mark.slow
def test_a_result_without_the_document_id_column_names_it(dsn, monkeypatch):
    monkeypatch.setenv(ENV, dsn)
    message = fault(PostgresParams(query="SELECT chunk_id, text FROM {table} LIMIT %(k)s"))
    assert "retrievers.postgres.query" in message and "no column 'doc_id'" in message
    assert "its columns: chunk_id, text" in message and "retrievers.postgres.doc_id_key" in message
    message = fault(PostgresParams(doc_id_key="source"))
    assert "no column 'source'" in message


@pytest.mark.slow
def test_a_wrong_table_lists_the_tables_there_are(dsn, monkeypatch):
    monkeypatch.setenv(ENV, dsn)
    message = fault(PostgresParams(table="chunkz"))
    assert message.startswith("retrievers.postgres: no table 'chunkz'; it has: chunks")
    assert "set retrievers.postgres.table" in message
    message = fault(PostgresParams(list_query="SELECT * FROM chunks_all"))
    assert "no table 'chunks_all'" in message and "set retrievers.postgres.list_query" in message


@pytest.mark.slow
def test_bad_sql_names_the_param_to_fix(dsn, monkeypatch):
    monkeypatch.setenv(ENV, dsn)
    message = fault(PostgresParams(query="SELEC doc_id, text FROM {table}"))
    assert message.startswith("retrievers.postgres.query:") and "SyntaxError" in message
    message = fault(PostgresParams(query="SELECT * FROM {table} WHERE text LIKE 'P%'"))
    assert "a literal % is written %%" in message


def test_a_closed_port_names_host_port_and_database(monkeypatch):
    port = free_port()  # nothing listens there
    monkeypatch.setenv(ENV, f"postgresql://goldenset:{SECRET}@127.0.0.1:{port}/shop")
    message = fault(PostgresParams())
    assert f"cannot connect to PostgreSQL at 127.0.0.1:{port}/shop" in message
    assert "refused" in message and f"in {ENV}" in message


def test_a_server_that_never_answers_times_out_on_connect_timeout(monkeypatch):
    with socket.socket() as silent:  # accepts connections (the kernel does) and says nothing
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        monkeypatch.setenv(ENV, f"host=127.0.0.1 port={port} dbname=shop password={SECRET}")
        started = time.monotonic()
        message = fault(PostgresParams(connect_timeout=2))
    assert time.monotonic() - started < 5  # psycopg's own default is 130 s
    assert f"127.0.0.1:{port}/shop" in message and "timeout" in message
    assert "retrievers.postgres.connect_timeout (2 s)" in message


def test_an_unset_or_empty_variable_says_what_to_set(monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    message = fault(PostgresParams())
    assert message.startswith(f"retrievers.postgres: set {ENV} to the database's connection")
    monkeypatch.setenv("TEAM_DSN", " ")
    assert "set TEAM_DSN" in fault(PostgresParams(dsn_env="TEAM_DSN"))


def test_a_malformed_connection_string_is_not_shown(monkeypatch):
    monkeypatch.setenv(ENV, f"host=db.example.com password={SECRET} port")
    message = fault(PostgresParams())
    assert f"{ENV} holds no valid connection string" in message


@pytest.mark.parametrize(
    "dsn",
    [
        f"host=postgresql://goldenset:{SECRET}@127.0.0.1/shop",  # a URI pasted as the host
        f"postgresql://goldenset:{SECRET.replace('-', '@')}@127.0.0.1:5/shop",  # @ not %40
    ],
)
def test_a_password_taken_for_a_host_is_not_shown(dsn, monkeypatch):
    """libpq quotes the host it cannot resolve: a mistyped DSN puts the password there."""
    monkeypatch.setenv(ENV, dsn)
    message = fault(PostgresParams())
    assert "cannot connect to PostgreSQL at" in message and "***@127.0.0.1" in message
    assert "s3cret" not in message and "Pa55word" not in message
    assert "an @ in a URI's password is written %40" in message


@pytest.mark.slow
def test_the_server_s_refusals_never_show_the_password(dsn, monkeypatch):
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    given = conninfo_to_dict(dsn)
    monkeypatch.setenv(ENV, make_conninfo(dsn, password=SECRET))
    with pytest.raises(psycopg.OperationalError):  # as tests.support.postgres_server's
        psycopg.connect(os.environ[ENV]).close()  # the cluster must check passwords
    message = fault(PostgresParams())
    assert "password authentication failed" in message
    assert f"{given['host']}:{given['port']}/{given['dbname']}" in message
    monkeypatch.setenv(ENV, make_conninfo(dsn, dbname="no_such_db"))
    message = fault(PostgresParams())
    assert 'database "no_such_db" does not exist' in message
    assert given["password"] not in message


@pytest.mark.slow
def test_answers_come_from_the_cache_once_asked_with_the_server_stopped(tmp_path, monkeypatch):
    """The store's own cluster: stopping it must not touch a shared one."""
    server = start_postgres()
    make_chunks(server.dsn)
    monkeypatch.setenv(ENV, server.dsn)
    settings = PostgresParams(enabled=True, cache_dir=str(tmp_path), version="1")
    load = store_loader(open_postgres, "postgres")
    first = load(settings)
    answers = ask_store("postgres", first, [QUESTION, "beer"], 3)
    listed = listed_chunks("postgres", first)
    assert [hit.chunk_id for hit in answers[0]] == ["a-0", "b-0", "a-1"] and len(listed) == 5
    first.cache.save()
    server.stop()

    again = load(settings)
    assert ask_store("postgres", again, [QUESTION, "beer"], 3) == answers
    assert listed_chunks("postgres", again) == listed
    assert again._store is None  # never opened
    refused = rf"at 127\.0\.0\.1:{server.port}/goldenset \(Connection refused\)"
    with pytest.raises(GoldensetError, match=refused):
        ask_store("postgres", again, ["a question not asked before"], 3)
    # a new version is a new identity: it asks again
    with pytest.raises(GoldensetError, match="cannot connect"):
        ask_store("postgres", load(settings.model_copy(update={"version": "2"})), [QUESTION], 3)
