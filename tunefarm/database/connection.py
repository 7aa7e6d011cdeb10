"""Opening SQLite connections the way several writer processes need them, and mapping sqlite errors.

WAL mode lets readers run while one process writes; ``busy_timeout`` makes a writer wait for the lock
instead of failing; write transactions start with ``BEGIN IMMEDIATE`` (taking the write lock up front, so
the busy handler applies; a read that later upgrades can fail without waiting) and are retried as a whole
if SQLite still reports the database as locked. ``synchronous=NORMAL`` in WAL mode keeps every committed
transaction across a process crash (only an OS crash/power loss can drop the last ones).
"""
from __future__ import annotations

import contextlib
import os
import random
import sqlite3
import struct
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from typing import TypeVar

from tunefarm.database import schema
from tunefarm.database.errors import CorruptDatabaseError, DatabaseError, DatabaseLockedError

T = TypeVar("T")

_MAGIC = b"SQLite format 3\x00"
_CORRUPT_HINTS = ("not a database", "malformed", "corrupt", "disk i/o error", "file is encrypted")


def is_locked(exc: BaseException) -> bool:
    msg = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in msg or "busy" in msg)


def translate(exc: sqlite3.Error, path: str) -> DatabaseError:
    """A tunefarm error with a message that names the file and says what to do."""
    msg = str(exc)
    low = msg.lower()
    if any(h in low for h in _CORRUPT_HINTS):
        return CorruptDatabaseError(
            f"tunefarm database {path!r} is corrupt or truncated ({msg}); restore it from a backup "
            f"or rebuild it from a JSON-lines export (Database.import_)")
    if is_locked(exc):
        return DatabaseLockedError(
            f"tunefarm database {path!r} stayed locked by other writers past the timeout ({msg})")
    return DatabaseError(f"tunefarm database {path!r}: {msg}")


@contextlib.contextmanager
def sqlite_errors(path: str) -> Iterator[None]:
    """Re-raise any ``sqlite3.Error`` inside the block as a :class:`DatabaseError`."""
    try:
        yield
    except sqlite3.Error as e:
        raise translate(e, path) from e


_HEAD_FDS: dict[tuple[int, int], int] = {}  # (device, inode) -> a descriptor this process never closes
_HEAD_FDS_LOCK = threading.Lock()


def _read_head(path: str) -> bytes:
    """The first 100 bytes of ``path``, read through a descriptor kept open for the life of the process.

    Closing any descriptor of a file drops every POSIX lock the process holds on it, SQLite's included: a
    header read with ``open()`` / ``close()`` while another thread's connection is open would let a writer in
    another process, closing last, checkpoint and delete the WAL under that connection, which then reads a
    stale study without an error. One descriptor per live file (by inode) is the price.
    """
    st = os.stat(path)
    with _HEAD_FDS_LOCK:
        fd = _HEAD_FDS.get((st.st_dev, st.st_ino))
        if fd is None:
            for key, old in list(_HEAD_FDS.items()):  # a deleted file's locks protect nothing: let it go
                if os.fstat(old).st_nlink == 0:
                    os.close(old)
                    del _HEAD_FDS[key]
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            _HEAD_FDS[st.st_dev, st.st_ino] = fd
    return os.pread(fd, 100, 0)


def check_header(path: str) -> None:
    """Reject a non-SQLite or visibly truncated file before SQLite gets confused by it."""
    if os.path.isdir(path):
        raise DatabaseError(f"{path!r} is a directory, not a tunefarm database file")
    try:
        size = os.path.getsize(path)
    except OSError:
        return  # a new file
    if size == 0:
        return
    head = _read_head(path)
    if len(head) < 100 or head[:16] != _MAGIC:
        raise CorruptDatabaseError(
            f"{path!r} is not a tunefarm database: it is not an SQLite file or its header is truncated")
    page_size = struct.unpack(">H", head[16:18])[0]
    page_size = 65536 if page_size == 1 else page_size
    change_counter, n_pages, valid_for = (struct.unpack(">I", head[o:o + 4])[0] for o in (24, 28, 92))
    wal = path + "-wal"
    wal_pending = os.path.exists(wal) and os.path.getsize(wal) > 0  # pages may legitimately live in the WAL
    if n_pages and change_counter == valid_for and not wal_pending and size < n_pages * page_size:
        raise CorruptDatabaseError(
            f"tunefarm database {path!r} is truncated: its header says {n_pages * page_size} bytes but the file "
            f"has {size}; restore it from a backup or rebuild it from a JSON-lines export")


def retry_locked(fn: Callable[[], T], timeout: float) -> T:
    """Call ``fn`` until it does not fail with 'database is locked', for at most ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    delay = 0.005
    while True:
        try:
            return fn()
        except sqlite3.OperationalError as e:
            if not is_locked(e) or time.monotonic() >= deadline:
                raise
        time.sleep(delay * random.uniform(0.5, 1.5))
        delay = min(delay * 2, 0.25)


def write_transaction(conn: sqlite3.Connection, fn: Callable[[sqlite3.Connection], T], timeout: float) -> T:
    """Run ``fn(conn)`` in one ``BEGIN IMMEDIATE`` transaction, retried whole while the file is locked."""

    def attempt() -> T:
        conn.execute("BEGIN IMMEDIATE")
        try:
            out = fn(conn)
            conn.execute("COMMIT")
            return out
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    return retry_locked(attempt, timeout)


def _cannot_open(path: str, exc: sqlite3.Error) -> DatabaseError:
    """Why SQLite cannot open (or create) ``path``, in words that name the file and its directory."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        return DatabaseError(f"cannot open tunefarm database {path!r}: directory {folder!r} does not exist")
    if not os.access(folder, os.W_OK):
        return DatabaseError(f"cannot open tunefarm database {path!r} for writing: directory {folder!r} is read-only "
                             f"(SQLite creates {os.path.basename(path)}-wal and -shm beside it)")
    if os.path.exists(path) and not os.access(path, os.W_OK):
        return DatabaseError(f"cannot open tunefarm database {path!r} for writing: the file is read-only")
    return translate(exc, path)


def open_connection(path: str, *, create: bool, timeout: float, readonly: bool = False) -> sqlite3.Connection:
    """Open ``path`` in WAL mode and bring its schema to the current version (see ``open_readonly`` for
    ``readonly``)."""
    if not create and not os.path.exists(path):
        raise DatabaseError(f"no tunefarm database at {path!r}")
    check_header(path)
    if readonly:
        return open_readonly(path, timeout)
    try:
        conn = sqlite3.connect(path, timeout=timeout, isolation_level=None)
        conn.execute("PRAGMA schema_version").fetchone()  # SQLite opens files lazily: fail here, not later
    except sqlite3.Error as e:
        raise _cannot_open(path, e) from e
    try:
        mode = retry_locked(lambda: conn.execute("PRAGMA journal_mode = WAL").fetchone()[0], timeout)
        if str(mode).lower() != "wal":
            raise DatabaseError(f"cannot use WAL mode on {path!r} (got {mode!r}); is it on a network filesystem?")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        version = schema.read_version(conn)
        schema.check_supported(version)
        if version < schema.CURRENT_VERSION:
            write_transaction(conn, schema.apply_migrations, timeout)
    except DatabaseError as e:
        conn.close()
        if str(path) not in str(e):
            raise type(e)(f"{path!r}: {e}") from e
        raise
    except sqlite3.Error as e:
        conn.close()
        raise _cannot_open(path, e) from e
    return conn


def _connect_readonly(path: str, timeout: float, immutable: bool) -> tuple[sqlite3.Connection, int]:
    uri = "file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=ro" + ("&immutable=1" if immutable else "")
    conn = sqlite3.connect(uri, uri=True, timeout=timeout, isolation_level=None)
    try:
        return conn, schema.read_version(conn)
    except BaseException:
        conn.close()
        raise


def open_readonly(path: str, timeout: float) -> sqlite3.Connection:
    """Open an existing database for reading only; nothing is ever written (the commands that only read).

    On a read-only filesystem SQLite cannot create the ``-shm`` file a WAL database needs; when no ``-wal``
    file holds uncheckpointed transactions, the file is then opened ``immutable`` (nothing can change a file
    on a read-only filesystem). A file of an older schema is upgraded first where that is possible (that one
    write is what opening it writable would do anyway).
    """
    try:
        try:
            conn, version = _connect_readonly(path, timeout, immutable=False)
        except sqlite3.OperationalError:
            wal = path + "-wal"
            if os.path.exists(wal) and os.path.getsize(wal) > 0:
                raise
            conn, version = _connect_readonly(path, timeout, immutable=True)
        schema.check_supported(version)
    except DatabaseError as e:
        raise type(e)(f"{path!r}: {e}") from e
    except sqlite3.Error as e:
        raise translate(e, path) from e
    if version < schema.CURRENT_VERSION:
        conn.close()
        try:
            open_connection(path, create=False, timeout=timeout).close()
        except DatabaseError as e:
            raise DatabaseError(f"tunefarm database {path!r} has schema version {version} and cannot be upgraded "
                                f"to {schema.CURRENT_VERSION} here ({e}); open it once where it is writable") from e
        return open_readonly(path, timeout)
    return conn
