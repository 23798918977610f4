"""Shared fixtures: an isolated AGENTFLOW_HOME, and the control plane on each store.

The PostgreSQL store is tested against a real server that this file starts once per
test session from Debian's binaries (``initdb`` in a temporary directory, listening
only on a Unix socket there, ``pg_ctl start``/``stop``); each test gets a schema of its
own in it.  Without the binaries those tests are skipped, saying so.
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
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import pytest

from plankit.agentflow.control import ControlPlane


@pytest.fixture(autouse=True)
def _no_shared_database(monkeypatch: pytest.MonkeyPatch) -> None:
    """A test uses the database its fixtures choose, never one from the environment."""
    monkeypatch.delenv("AGENTFLOW_DATABASE_URL", raising=False)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """AGENTFLOW_HOME in a temporary directory; no session in the environment."""
    path = tmp_path / "agentflow-home"
    monkeypatch.setenv("AGENTFLOW_HOME", str(path))
    monkeypatch.delenv("AGENTFLOW_SESSION_ID", raising=False)
    return path


# --- a PostgreSQL server for the session ----------------------------------------------


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


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """A PostgreSQL server of this test session's own, stopped at its end."""
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


# --- the control plane on each store -----------------------------------------------------


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, home: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The store under test, set in the environment: ``sqlite`` (under AGENTFLOW_HOME)
    or ``postgresql`` (a schema of the session's server, in AGENTFLOW_DATABASE_URL)."""
    if request.param == "postgresql":
        server: PostgresServer = request.getfixturevalue("postgres")
        monkeypatch.setenv("AGENTFLOW_DATABASE_URL", server.new_schema())
    return str(request.param)


@pytest.fixture
def planes(store: str) -> Iterator[Callable[[], ControlPlane]]:
    """Make control planes on the store under test (closed at the end)."""
    made: list[ControlPlane] = []

    def make() -> ControlPlane:
        plane = ControlPlane()
        made.append(plane)
        return plane

    yield make
    for plane in made:
        plane.close()
