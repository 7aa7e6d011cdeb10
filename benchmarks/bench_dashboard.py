"""The dashboard on a big study: first view and refreshes (run: ``python benchmarks/bench_dashboard.py``).

Builds a study of ``--records`` records (default 100,000; 4 workloads, 2 jobs, real sampled traces, 12 %
failures) through the database's own API, then times over HTTP against a real server on 127.0.0.1:

* server start: opening the study and folding in every record, before the server listens (no budget: the
  command prints its URL when done);
* first view: that fresh server answering ``/api/summary`` and the busiest task's ``/api/task`` -- what the page
  asks for when it opens (budget: 1 s);
* refresh, nothing new: ``/api/summary`` + ``/api/task`` on the warm server (budget: 100 ms);
* refresh after a job step: one 64-record batch committed, then the same two requests (budget: 100 ms);
* beside them, what a refresh would cost if it re-read the study: ``Database.records(decisions=False)``;
* and how long the per-host medians take on their own thread (no request waits for them).

``--postgres`` runs the same on a PostgreSQL study (a private server the benchmark starts and removes, on
loopback; needs ``tunefarm[postgres]`` and the server's binaries), analyzed after it is built as autovacuum
would within a minute. Prints medians with their min-max spread, the CPU seconds the process spent (what the time would be on idle
cores: the machine's load shows in the gap), and the ratios; exits 1 if a median misses its budget.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import statistics
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from tunefarm.dashboard import DashboardServer  # noqa: E402
from tunefarm.dashboard.queries import StudyQueries  # noqa: E402
from tunefarm.database import Record, open_database  # noqa: E402
from tunefarm.runtime.measure_result import MeasureResult, MeasureStatus  # noqa: E402
from tunefarm.testing.postgres_server import PostgresServer  # noqa: E402
from tunefarm.testing.synthetic_study import TARGET, build_study, sampled_traces  # noqa: E402

BUDGETS = {"server start (reads the whole study)": math.inf, "first view": 1.0, "refresh, nothing new": 0.1,
           "refresh after a 64-record step": 0.1}


def _get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=60) as r:
        return json.loads(r.read())


def _page_view(server: DashboardServer) -> dict:
    """The two requests a page makes per refresh; returns the summary."""
    s = _get(server.url + "api/summary")
    busiest = max(s["tasks"], key=lambda t: t["n"])
    _get(server.url + f"api/task?workload={busiest['workload_id']}&target={busiest['target_id']}&k=10")
    return s


CPU: dict[str, list[float]] = {}  # CPU seconds of this process (server and client) per timed call


def _timed(fn, repeats: int, name: str = "") -> list[float]:
    out = []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        out.append(time.perf_counter() - t0)
        CPU.setdefault(name, []).append(time.process_time() - c0)
    return out


def _line(name: str, xs: list[float], ref: float | None = None) -> float:
    med = statistics.median(xs)
    ratio = f"  {ref / med:6.1f}x faster than re-reading" if ref else ""
    cpu = f"  cpu {statistics.median(CPU[name]) * 1e3:7.1f} ms" if name in CPU else ""
    print(f"{name:42s} median {med * 1e3:8.1f} ms  min-max {min(xs) * 1e3:7.1f} - {max(xs) * 1e3:7.1f} ms"
          f"  (n={len(xs)}){cpu}{ratio}")
    return med


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--postgres", action="store_true", help="a study on a private PostgreSQL server")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        path = os.path.join(tmp, "big.sqlite")
        if args.postgres:
            path = stack.enter_context(PostgresServer()).new_database("big")
        t0 = time.perf_counter()
        with open_database(path) as db:
            info = build_study(db, args.records, n_workloads=4, n_jobs=2)
        if args.postgres:  # the statistics autovacuum gathers within a minute of a bulk load (without them the
            # planner takes the fresh table for empty and sorts a whole task for its top-k)
            import psycopg  # only a --postgres run needs the client
            with psycopg.connect(path, autocommit=True) as conn:
                conn.execute("ANALYZE")
        servers: list[DashboardServer] = []
        size = "on PostgreSQL" if args.postgres else f"{os.path.getsize(path) / 2**20:.0f} MiB"
        print(f"built a study of {args.records:,} records in {time.perf_counter() - t0:.1f} s "
              f"({size}); {os.cpu_count()} CPUs")

        starts, views = [], []
        for _ in range(max(3, args.repeats // 3)):
            starts += _timed(lambda: servers.append(DashboardServer(path, port=0).start()), 1,
                             "server start (reads the whole study)")
            views += _timed(lambda: _page_view(servers[-1]), 1, "first view")
            servers.pop().close()
        results = {"server start (reads the whole study)": starts, "first view": views}
        writer = open_database(path)
        traces = sampled_traces(8, seed=11)
        ok = MeasureResult(MeasureStatus.OK, [2e-5] * 3, 0.1, None, "worker-9")
        with DashboardServer(path, port=0).start() as server:
            _page_view(server)
            _page_view(server)  # the second refresh starts the host medians (the first leaves them: a big read)
            server.service.wait_medians()
            results["refresh, nothing new"] = _timed(lambda: _page_view(server), args.repeats, "refresh, nothing new")
            step = []
            for r in range(args.repeats):
                writer.commit_records([Record(info["keys"][0], traces[i % 8][0], f"step-{r}-{i}", TARGET, ok, None, i)
                                       for i in range(64)])
                step += _timed(lambda: _page_view(server), 1, "refresh after a 64-record step")
            results["refresh after a 64-record step"] = step
            final = _get(server.url + "api/summary")
        assert final["n_records"] == args.records + 64 * args.repeats == writer.count_records()
        reread = _timed(lambda: writer.records(decisions=False), max(3, args.repeats // 3))
        q = StudyQueries.open(path)
        medians = _timed(q.host_medians, 3)
        q.close()
        writer.close()
    ref = statistics.median(reread)
    failed = []
    for name, xs in results.items():
        med = _line(name, xs, ref if name.startswith("refresh") else None)
        if med > BUDGETS[name]:
            failed.append(f"{name}: median {med * 1e3:.0f} ms > budget {BUDGETS[name] * 1e3:.0f} ms")
    _line("re-reading: records(decisions=False)", reread)
    _line("host medians (own thread, per 2 % growth)", medians)
    print("\n".join(failed) or "every median within its budget")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
