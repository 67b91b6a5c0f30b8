"""postgres: a team's own retriever in PostgreSQL, asked with the team's own SQL through psycopg 3
(the `postgres` extra).

``query`` is run once per question with the named parameters ``%(query)s`` (the question) and
``%(k)s`` (how many passages); its columns are read by name: the document id (``doc_id``, or the
column ``doc_id_key`` names) and ``text`` are required, ``chunk_id``, ``start``, ``end`` and
``score`` optional. A literal ``%`` in it is written ``%%``. ``{table}`` stands for ``table``,
quoted (``schema.table`` is allowed). The default is a full-text search that ranks the chunks
holding any of the question's words by ``ts_rank``: ``plainto_tsquery`` alone would AND the
words, so a chunk would need every word of the question to be found at all. It scans the table;
an index on the same expression makes it fast::

    CREATE INDEX ON chunks USING gin (to_tsvector('english', text));

A store of vectors (pgvector) embeds the question with the packaged model named in ``model``,
passed as ``%(embedding)s`` (a list of floats: cast it), e.g.::

    SELECT chunk_id, doc_id, text, 1 - (embedding <=> %(embedding)s::vector) AS score
    FROM {table} ORDER BY embedding <=> %(embedding)s::vector LIMIT %(k)s

``list_query`` lists every chunk (the store's whole chunking, for the chunk view); empty when the
table is not the whole chunking.

The connection string is a secret: params hold only the name of the environment variable that
holds it (``dsn_env``), and no message, log or cache shows it; messages name host:port/database.
Nor is it part of the store's identity (each machine may name the same server differently): point
it at another database and bump ``version``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import Field

from goldenset.core.errors import GoldensetError
from goldenset.retrieval.retrievers.base import RETRIEVERS
from goldenset.retrieval.stores.base import (
    Hit,
    StoreSection,
    query_encoder,
    store_entry,
    unknown_name,
)

if TYPE_CHECKING:
    import psycopg

NAME = "postgres"
EMBEDDING = "%(embedding)s"
# the question's words OR-ed: plainto_tsquery ANDs them ('capit' & 'franc' -> 'capit' | 'franc')
DEFAULT_QUERY = (
    "SELECT c.*, ts_rank(to_tsvector('english', c.text), q) AS score "
    "FROM {table} AS c, "
    "(SELECT replace(plainto_tsquery('english', %(query)s)::text, ' & ', ' | ')::tsquery AS q) "
    "AS question WHERE to_tsvector('english', c.text) @@ q ORDER BY score DESC LIMIT %(k)s"
)
DEFAULT_LIST_QUERY = "SELECT * FROM {table}"
OPTIONAL = ("chunk_id", "start", "end", "score")


class PostgresParams(StoreSection):
    doc_id_key: str = Field(
        "doc_id", min_length=1, description="the column that holds a passage's document id"
    )
    dsn_env: str = Field(
        "GOLDENSET_POSTGRES_DSN",
        min_length=1,
        description="the environment variable holding the connection string (a secret, never a "
        "param): postgresql://user:password@host:5432/dbname",
    )
    table: str = Field(
        "chunks", min_length=1, description="the table {table} names in the queries (schema.table)"
    )
    query: str = Field(
        DEFAULT_QUERY,
        min_length=1,
        description="SQL run per question with %(query)s and %(k)s (and %(embedding)s with model); "
        "its columns: doc_id and text, optionally chunk_id, start, end, score; the default ranks "
        "by ts_rank the chunks holding any of the question's words",
    )
    list_query: str = Field(
        DEFAULT_LIST_QUERY,
        description="SQL listing every chunk, the same columns; empty: the store cannot list them",
    )
    model: str = Field(
        "",
        description="the packaged embedding model passed to query as %(embedding)s (pgvector); "
        "empty: the query takes no embedding",
    )
    connect_timeout: int = Field(10, gt=0, description="seconds to wait for the server")


class PostgresStore:
    """An open connection and the two queries, ``{table}`` filled in."""

    def __init__(self, connection: psycopg.Connection, settings: PostgresParams) -> None:
        from psycopg import sql

        self.connection, self.settings = connection, settings
        info = connection.info
        self.described = f"PostgreSQL {info.dbname!r} at {info.host}:{info.port}"
        table = sql.Identifier(*settings.table.split(".")).as_string(connection)
        self.query = settings.query.replace("{table}", table)
        self.list_query = settings.list_query.replace("{table}", table)
        self._encode: Callable[[list[str]], Any] | None = None

    def close(self) -> None:
        self.connection.close()

    def search(self, texts: list[str], k: int) -> list[list[Hit]]:
        """One statement per question, sent together (psycopg's pipeline: one round trip)."""
        if not texts:
            return []
        parameters = [{"query": text, "k": k} for text in texts]
        if EMBEDDING in self.settings.query:
            for bound, vector in zip(parameters, self._embed(texts), strict=True):
                bound["embedding"] = [float(value) for value in vector]
        hits: list[list[Hit]] = []
        with self.connection.cursor() as cursor:
            self._run("query", lambda: cursor.executemany(self.query, parameters, returning=True))
            for _ in texts:
                hits.append(self._hits(cursor, "query")[:k])
                cursor.nextset()
        return hits

    def chunks(self) -> list[Hit] | None:
        if not self.list_query.strip():
            return None
        with self.connection.cursor() as cursor:
            self._run("list_query", lambda: cursor.execute(self.list_query))
            return self._hits(cursor, "list_query")

    def _embed(self, texts: list[str]) -> Any:
        if self._encode is None:  # loaded once, when the first question is asked
            self._encode = query_encoder(self.settings.model)
        return self._encode(texts)

    def _hits(self, cursor: psycopg.Cursor, param: str) -> list[Hit]:
        names = [column.name for column in cursor.description or []]
        key = self.settings.doc_id_key
        for wanted, hint in [(key, "doc_id_key"), ("text", None)]:
            if wanted not in names:
                raise missing_column(param, wanted, names, hint)
        at = {name: names.index(name) for name in [key, "text", *OPTIONAL] if name in names}
        return [_hit(row, at, key) for row in cursor.fetchall()]

    def _run(self, param: str, call: Callable[[], Any]) -> None:
        """A statement: its SQL's faults name the param to change. A lost connection is left to
        ask_store, whose message counts the answers kept."""
        import psycopg

        try:
            call()
        except psycopg.errors.UndefinedTable as error:
            raise self._no_table(error, param) from None
        except psycopg.ProgrammingError as error:  # the SQL or its placeholders
            raise GoldensetError(
                f"retrievers.{NAME}.{param}: {self.described} rejects it "
                f"({type(error).__name__}: {first_line(error)}); fix the SQL (placeholders "
                "%(query)s, %(k)s, %(embedding)s; a literal % is written %%)"
            ) from None

    def _no_table(self, error: psycopg.Error, param: str) -> GoldensetError:
        """The tables there are, by the name a query uses: bare on the search path."""
        missing = re.search(r'relation "([^"]+)" does not exist', str(error))
        given = missing.group(1) if missing else self.settings.table
        rows = self.connection.execute(
            "SELECT CASE WHEN table_schema = ANY(current_schemas(false)) THEN table_name "
            "ELSE table_schema || '.' || table_name END FROM information_schema.tables "
            "WHERE table_schema NOT IN ('pg_catalog', 'information_schema')"
        ).fetchall()
        fix = "table" if "{table}" in getattr(self.settings, param) else param
        missing = unknown_name(NAME, "table", given, [row[0] for row in rows])
        return GoldensetError(
            f"{missing}; set retrievers.{NAME}.{fix} to one of them, or check the database "
            f"({self.described})"
        )


def _hit(row: Sequence[Any], at: dict[str, int], key: str) -> Hit:
    def value(name: str) -> Any:
        return row[at[name]] if name in at else None

    doc_id, chunk_id, start, end, score = (value(name) for name in [key, *OPTIONAL])
    return Hit(
        None if doc_id is None else str(doc_id),
        value("text") or "",
        None if start is None else int(start),
        None if end is None else int(end),
        None if score is None else float(score),
        None if chunk_id is None else str(chunk_id),
    )


def missing_column(param: str, wanted: str, names: list[str], hint: str | None) -> GoldensetError:
    has = f"its columns: {', '.join(names)}" if names else "it returns no rows: make it a SELECT"
    also = f", or set retrievers.{NAME}.{hint} to the column that holds it" if hint else ""
    return GoldensetError(
        f"retrievers.{NAME}.{param}: its result has no column {wanted!r} ({has}); "
        f'select it as "{wanted}"{also}'
    )


def first_line(error: BaseException) -> str:
    return " ".join((str(error).strip().splitlines() or [""])[0].split())[:300]


def connection_string(settings: PostgresParams) -> str:
    """The DSN from the environment, checked to parse; its text never enters a message."""
    from psycopg.conninfo import conninfo_to_dict

    dsn = os.environ.get(settings.dsn_env, "")
    if not dsn.strip():  # a CI secret that is not set comes through as an empty string
        raise GoldensetError(
            f"retrievers.{NAME}: set {settings.dsn_env} to the database's connection string "
            "(postgresql://user:password@host:5432/dbname), or name the variable that holds it "
            f"in retrievers.{NAME}.dsn_env: it is a secret, never a param"
        )
    try:
        conninfo_to_dict(dsn)
    except Exception:  # its message quotes the string, password included
        raise GoldensetError(
            f"retrievers.{NAME}: {settings.dsn_env} holds no valid connection string (not shown: "
            "it is a secret); write postgresql://user:password@host:5432/dbname or "
            "host=... port=... dbname=... user=... password=..."
        ) from None
    return dsn


def where(dsn: str) -> str:
    """host:port/database of a DSN, as libpq would fill them in: no user, no password."""
    from psycopg.conninfo import conninfo_to_dict

    given = conninfo_to_dict(dsn)
    host = given.get("host") or given.get("hostaddr") or os.environ.get("PGHOST") or "localhost"
    port = given.get("port") or os.environ.get("PGPORT") or "5432"
    database = given.get("dbname") or os.environ.get("PGDATABASE") or "(the user's database)"
    return hidden(f"{host}:{port}/{database}", dsn)


# what precedes an @ up to a blank, quote or slash: a URI's user:password@, or the rest of a
# password whose @ was not written %40 (libpq then takes "rest@host" for the host)
BEFORE_AT = re.compile(r"""[^\s'"/]*@""")


def hidden(text: str, dsn: str) -> str:
    """A message, or a host, with the DSN, its password and anything written before an @
    blanked: libpq quotes the host it could not resolve, which a mistyped DSN fills with a
    password (host=postgresql://user:password@..., or a password holding an unencoded @)."""
    from psycopg.conninfo import conninfo_to_dict

    password = str(conninfo_to_dict(dsn).get("password") or "")
    for secret in [dsn, password]:
        if secret:
            text = text.replace(secret, "***")
    return BEFORE_AT.sub("***@", text)


def open_postgres(settings: PostgresParams) -> PostgresStore:
    """A read-only store needs no transaction: autocommit, so a failed statement leaves the
    connection usable for the next one."""
    import psycopg

    if EMBEDDING in settings.query and not settings.model:
        raise GoldensetError(
            f"retrievers.{NAME}.query takes {EMBEDDING}: set retrievers.{NAME}.model to the "
            "packaged embedding model that embedded the table's vectors"
        )
    dsn = connection_string(settings)
    try:
        connection = psycopg.connect(dsn, autocommit=True, connect_timeout=settings.connect_timeout)
    except psycopg.Error as error:
        reason = hidden(first_line(error).rsplit("failed: ", 1)[-1], dsn)
        if "@" in where(dsn):  # libpq took the rest of a password for the host
            reason += "; an @ in a URI's password is written %40"
        raise GoldensetError(
            f"retrievers.{NAME}: cannot connect to PostgreSQL at {where(dsn)} ({reason}); check "
            f"that the server is up and reachable from here, the host, port, database, user and "
            f"password in {settings.dsn_env}, and retrievers.{NAME}.connect_timeout "
            f"({settings.connect_timeout} s)"
        ) from None
    return PostgresStore(connection, settings)


RETRIEVERS.register(NAME, store_entry(PostgresParams, open_postgres, NAME))
