"""A real PostgreSQL server for the database-source tests, started (and stopped) by the test session.

The server binaries come from Debian's ``postgresql`` package (``scripts/test.sh`` installs it);
as root the server runs as the package's ``postgres`` user (PostgreSQL refuses to run as root).
It listens on 127.0.0.1 on a free port, with trust authentication, in a temporary folder.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest


def _binary(name: str) -> str | None:
    """``name`` on the PATH, else in the newest ``/usr/lib/postgresql/<version>/bin``."""
    found = shutil.which(name)
    if found:
        return found
    cands = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"),
                   key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0)
    return cands[-1] if cands else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def postgres_url():
    """``postgresql://synthguard@127.0.0.1:PORT/postgres`` of a server running for the session."""
    pytest.importorskip("sqlalchemy", reason="SQLAlchemy is not installed: pip install 'synthguard[sql]'")
    pytest.importorskip("psycopg", reason="psycopg is not installed: pip install 'synthguard[sql]'")
    initdb, pg_ctl = _binary("initdb"), _binary("pg_ctl")
    if not initdb or not pg_ctl:
        pytest.skip("PostgreSQL server binaries (initdb, pg_ctl) are not installed: scripts/test.sh "
                    "installs Debian's postgresql (apt-get install postgresql)")
    root = Path(tempfile.mkdtemp(prefix="synthguard-pg-"))
    as_user: list[str] = []
    if os.geteuid() == 0:
        import pwd

        try:
            user = pwd.getpwnam("postgres")
        except KeyError:
            shutil.rmtree(root, ignore_errors=True)
            pytest.skip("running as root without a 'postgres' user to run the server as")
        os.chown(root, user.pw_uid, user.pw_gid)
        as_user = ["runuser", "-u", "postgres", "--"]
    data, port = root / "data", _free_port()

    def run(*args: str) -> None:
        subprocess.run([*as_user, *args], check=True, capture_output=True, timeout=120)

    try:
        run(initdb, "-D", str(data), "-U", "synthguard", "--auth=trust", "-E", "UTF8", "--locale=C")
        run(pg_ctl, "-D", str(data), "-l", str(root / "server.log"), "-w", "-t", "60", "-o",
            f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off", "start")
    except subprocess.CalledProcessError as exc:
        log = (root / "server.log").read_text(errors="replace") if (root / "server.log").exists() else ""
        shutil.rmtree(root, ignore_errors=True)
        raise RuntimeError(f"PostgreSQL did not start: {exc.stderr.decode(errors='replace')} {log}") from exc
    try:
        yield f"postgresql://synthguard@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([*as_user, pg_ctl, "-D", str(data), "-m", "immediate", "stop"],
                       capture_output=True, timeout=60)
        shutil.rmtree(root, ignore_errors=True)
