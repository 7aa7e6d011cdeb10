"""A private PostgreSQL server for tests, drills and benchmarks: the machine's own ``initdb`` / ``pg_ctl``.

The server runs as the unprivileged ``postgres`` user when started by root (``initdb`` refuses root), listens
on loopback at a free port with its socket in a private directory, and is removed with everything it wrote
on ``stop``. ``restart_after`` stops it and starts it again later in the background (the server-restart drill).
A server for drivers on other hosts listens on one address of its own instead (``listen``), admits password
logins from the given subnet (``clients``), and runs its commands through ``run_prefix`` (e.g. ``nsenter`` into
a test host's namespaces, so that the address exists where it starts).
Nothing here is used by the library.
"""
from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time

PASSWORD = "s3cret-Pa55"  # the test role's password: tests check it never shows up in output


def _bin_dir() -> str:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    if found:
        return os.path.dirname(found[-1])
    exe = shutil.which("pg_ctl")
    if exe is None:
        raise RuntimeError("PostgreSQL is not installed (no pg_ctl): apt-get install -y postgresql")
    return os.path.dirname(exe)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PostgresServer:
    """One throwaway PostgreSQL cluster with database ``tunefarm``, a password role ``tuner`` that owns it and
    a ``reader`` role (password ``PASSWORD`` too) that may only read."""

    def __init__(self, listen: str = "127.0.0.1", clients: str | None = None, run_prefix: tuple[str, ...] = ()):
        self.listen = listen
        self.clients = clients
        self.run_prefix = tuple(run_prefix)
        self.bin = _bin_dir()
        self.root = tempfile.mkdtemp(prefix="tunefarm-pg-")
        os.chmod(self.root, 0o777)
        self.data = os.path.join(self.root, "data")
        self.log = os.path.join(self.root, "server.log")
        self.port = _free_port()
        self._user = "postgres" if os.geteuid() == 0 else None
        self._restart: threading.Thread | None = None

    def url(self, role: str = "tuner", password: str = PASSWORD, dbname: str = "tunefarm") -> str:
        return f"postgresql://{role}:{password}@{self.listen}:{self.port}/{dbname}"

    def _run(self, *args: str, timeout: float = 120) -> str:
        cmd = [os.path.join(self.bin, args[0]), *args[1:]]
        if self._user:
            cmd = ["runuser", "-u", self._user, "--", *cmd]
        cmd = [*self.run_prefix, *cmd]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        if proc.returncode != 0:
            raise RuntimeError(f"{args[0]} exited {proc.returncode}: {proc.stderr[-1500:] or proc.stdout[-1500:]}")
        return proc.stdout

    def _sql(self, sql: str) -> None:
        self._run("psql", "-h", self.root, "-p", str(self.port), "-U", "postgres", "-d", "postgres",
                  "-v", "ON_ERROR_STOP=1", "-q", "-c", sql)

    def start(self) -> "PostgresServer":
        """initdb, start, and create the roles and the database."""
        if self._user:
            shutil.chown(self.root, self._user)
        self._run("initdb", "-D", self.data, "-U", "postgres", "--auth-local=trust", "--auth-host=scram-sha-256",
                  "-E", "UTF8", "--no-sync")
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write(f"\nport = {self.port}\nlisten_addresses = '{self.listen}'\nunix_socket_directories = '{self.root}'\n"
                    "fsync = off\nmax_connections = 100\nshared_buffers = 32MB\n")
        if self.clients:
            with open(os.path.join(self.data, "pg_hba.conf"), "a") as f:
                f.write(f"\nhost all all {self.clients} scram-sha-256\n")
        self.start_server()
        self._sql(f"CREATE ROLE tuner LOGIN PASSWORD '{PASSWORD}'")
        self._sql(f"CREATE ROLE reader LOGIN PASSWORD '{PASSWORD}'")
        self._sql("CREATE DATABASE tunefarm OWNER tuner")
        return self

    def new_database(self, dbname: str) -> str:
        """Create an empty database ``dbname`` owned by ``tuner``; returns its URL."""
        self._sql(f"CREATE DATABASE {dbname} OWNER tuner")
        return self.url(dbname=dbname)

    def grant_reader(self, dbname: str = "tunefarm") -> None:
        """Let ``reader`` read every table (run after the schema exists)."""
        self._run("psql", "-h", self.root, "-p", str(self.port), "-U", "tuner", "-d", dbname, "-v",
                  "ON_ERROR_STOP=1", "-q", "-c", "GRANT USAGE ON SCHEMA public TO reader; "
                  "GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader")

    def start_server(self) -> None:
        self._run("pg_ctl", "-D", self.data, "-l", self.log, "-w", "-t", "60", "start")

    def stop_server(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", self.data, "-m", mode, "-w", "-t", "60", "stop")

    def restart_after(self, down_s: float) -> threading.Thread:
        """Stop the server now (its connections drop) and start it again ``down_s`` seconds later, in a thread."""
        self.stop_server("immediate")

        def later():
            time.sleep(down_s)
            self.start_server()

        self._restart = threading.Thread(target=later, daemon=True)
        self._restart.start()
        return self._restart

    def stop(self) -> None:
        """Stop the server (if it runs) and delete its directory."""
        if self._restart is not None:
            self._restart.join()
        try:
            self.stop_server("immediate")
        except (RuntimeError, subprocess.TimeoutExpired):
            pass  # it was not running
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> "PostgresServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
