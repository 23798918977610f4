"""A real PostgreSQL server for the tests that need one (agentflow's shared control
plane, and the board reading it): started once per test session from Debian's binaries
(``initdb`` in a temporary directory, listening only on a Unix socket there, ``pg_ctl
start``/``stop``); each test takes a schema of its own with
:meth:`PostgresServer.new_schema`.  Without the binaries those tests are skipped, saying
so.  ``tests/conftest.py`` makes the ``postgres`` fixture available to every test.

A mutation run (``tools/mutate.py``) starts a test session for each mutant; starting a
server for each costs more than the tests.  :data:`ENV_RUNNING` names the socket
directory of a server started once beforehand (user and database ``agentflow``, as
here), which the tests then share, each in its own schema.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import secrets
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import quote

import pytest


def postgres_bin() -> str | None:
    """The directory of Debian's ``initdb`` and ``pg_ctl``, or ``None``."""
    for candidate in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if os.access(os.path.join(candidate, "initdb"), os.X_OK):
            return candidate
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return os.path.dirname(os.path.realpath(found))
    return None


@dataclass
class PostgresServer:
    """A running server, reachable on the Unix socket in ``socket_dir``."""

    socket_dir: str
    user: str

    def url(self, schema: str | None = None) -> str:
        """A libpq URL of the server's database; with ``schema``, the search path."""
        url = f"postgresql:///agentflow?host={quote(self.socket_dir)}&user={self.user}"
        if schema is not None:
            url += "&options=" + quote(f"-csearch_path={schema}")
        return url

    def new_schema(self) -> str:
        """A URL whose tables live in a new, empty schema of their own."""
        import psycopg

        schema = f"t_{secrets.token_hex(6)}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
        return self.url(schema)


def _as_server_user() -> tuple[list[str], int | None, int | None]:
    """How to run the server's commands: PostgreSQL refuses to run as root."""
    if os.geteuid() != 0:
        return [], None, None
    user = pwd.getpwnam("postgres") if _has_user("postgres") else pwd.getpwnam("nobody")
    return ["runuser", "-u", user.pw_name, "--"], user.pw_uid, user.pw_gid


def _has_user(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


ENV_RUNNING = "PLANKIT_TEST_POSTGRES"
"""The socket directory of a running server for the tests to use instead of their own."""


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """A PostgreSQL server of this test session's own, stopped at its end (or the one
    :data:`ENV_RUNNING` names, left running)."""
    running = os.environ.get(ENV_RUNNING)
    if running:
        yield PostgresServer(running, "agentflow")
        return
    bindir = postgres_bin()
    if bindir is None:
        pytest.skip(
            "PostgreSQL's initdb and pg_ctl are not installed (apt-get install postgresql); "
            "the PostgreSQL store is not tested"
        )
    prefix, uid, gid = _as_server_user()
    if prefix and shutil.which("runuser") is None:
        pytest.skip("running as root without runuser: cannot start PostgreSQL as another user")
    base = tempfile.mkdtemp(prefix="agentflow-pg-")
    if uid is not None and gid is not None:
        os.chown(base, uid, gid)
    data = os.path.join(base, "data")

    def run(*args: str) -> None:
        result = subprocess.run(
            [*prefix, *args], capture_output=True, text=True, timeout=120, cwd=base
        )
        if result.returncode != 0:
            raise RuntimeError(f"{args[0]} failed: {result.stdout}{result.stderr}")

    options = (
        f"-k {base} -c listen_addresses='' -c fsync=off -c synchronous_commit=off "
        "-c full_page_writes=off -c max_connections=100"
    )
    try:
        run(f"{bindir}/initdb", "-D", data, "-U", "agentflow", "--auth=trust", "-E", "UTF8", "-N")
        run(f"{bindir}/pg_ctl", "-D", data, "-o", options, "-l", f"{base}/log", "-w", "start")
    except Exception:
        shutil.rmtree(base, ignore_errors=True)
        raise
    server = PostgresServer(base, "agentflow")
    try:
        import psycopg

        with psycopg.connect(
            server.url().replace("/agentflow?", "/postgres?"), autocommit=True
        ) as conn:
            conn.execute("CREATE DATABASE agentflow")
        yield server
    finally:
        with contextlib.suppress(Exception):
            run(f"{bindir}/pg_ctl", "-D", data, "-m", "immediate", "-w", "stop")
        shutil.rmtree(base, ignore_errors=True)
