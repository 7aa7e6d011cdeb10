"""``tunefarm dashboard``: serve a live, read-only web page over a study until interrupted."""
from __future__ import annotations

import argparse
import sys
import time

from .db_option import add_db_option
from .errors import CommandError


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("dashboard", help="serve a live read-only web page over a trace database",
                       description="Serve a web page that follows a study while jobs write to it: jobs, "
                                   "tasks, best-so-far curves, top programs, decisions, hosts. Read-only.")
    add_db_option(p, help="the study: a trace database file (SQLite) or a postgresql://user:password@host:port/dbname "
                          "URL (a role that may only SELECT is enough; the password is never shown); repeat it to "
                          "show several as one, as the other commands read them (the first one first)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to bind (default 127.0.0.1: this machine only; 0.0.0.0 shares it)")
    p.add_argument("--port", type=int, default=8080, help="port to bind (default 8080; 0 picks a free one)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # the server and the database load when the command runs (see the package docstring)
    from ..dashboard import DashboardServer

    if not 0 <= args.port <= 65535:
        raise CommandError(f"--port must be in 0..65535, got {args.port}")
    t0 = time.perf_counter()
    try:
        server = DashboardServer(args.db if len(args.db) > 1 else args.db[0], args.host, args.port)
    except OSError as e:
        raise CommandError(f"cannot listen on {args.host}:{args.port}: {e.strerror or e}") from e
    print(f"tunefarm dashboard of {server.service.name} ({server.service.records_read():,} records read in "
          f"{time.perf_counter() - t0:.1f} s) at {server.url} (Ctrl-C stops it)", flush=True)
    for line in server.service.layer_errors():  # a study that cannot be read now; the page says so too
        print(f"tunefarm dashboard: warning: {line}", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    return 0
