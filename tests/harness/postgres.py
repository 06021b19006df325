"""A real PostgreSQL server the tests start themselves (from the Debian `postgresql` package), on a free port."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path

#: CI sets this: a missing PostgreSQL is then a failure, not a skip.
REQUIRE_ENV = "BEE_REQUIRE_POSTGRES"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def binaries() -> Path | None:
    """The directory holding initdb and pg_ctl, if PostgreSQL is installed."""
    for candidate in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if Path(candidate, "initdb").exists():
            return Path(candidate)
    found = shutil.which("initdb")
    return Path(found).parent if found else None


class PostgresServer:
    """initdb + pg_ctl in a temporary directory; databases are created per test."""

    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        # In memory where there is a tmpfs: the suite creates a database per test (hundreds, 7.5 MB each), and
        # creating and finally removing them on disk took a minute of a run.
        shm = Path("/dev/shm")
        in_memory = shm if shm.is_dir() and os.access(shm, os.W_OK) else None
        self.root = Path(tempfile.mkdtemp(prefix="bee-pg-", dir=in_memory))
        self.data = self.root / "data"
        self.port = free_port()
        # initdb refuses to run as root: run the server as the `postgres` account the package created.
        self.run_as: list[str] = []
        if os.geteuid() == 0:
            account = pwd.getpwnam("postgres")
            os.chown(self.root, account.pw_uid, account.pw_gid)
            self.run_as = ["runuser", "-u", "postgres", "--"]

    def _run(self, *argv: str) -> None:
        subprocess.run([*self.run_as, *argv], check=True, capture_output=True, timeout=120)

    def start(self) -> None:
        self._run(
            str(self.bindir / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "bee", "--no-sync", "-E", "UTF8"
        )
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300"
        self._run(
            str(self.bindir / "pg_ctl"),
            "-D",
            str(self.data),
            "-o",
            options,
            "-w",
            "-l",
            str(self.root / "log"),
            "start",
        )

    def stop(self) -> None:
        try:
            self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://bee@127.0.0.1:{self.port}/{database}"

    def create_database(self) -> str:
        """A fresh empty database; returns its URL."""
        import psycopg

        name = "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.url(), autocommit=True) as conn:
            # FILE_COPY copies the template's files (the fast way with fsync off) instead of writing it all to the
            # WAL, PostgreSQL 15's default.
            conn.execute(f'CREATE DATABASE "{name}" STRATEGY = FILE_COPY')
        return self.url(name)
