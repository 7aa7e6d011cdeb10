"""The dashboard on a big study: first view and refreshes (run: ``python benchmarks/bench_dashboard.py``).

Builds a study of ``--records`` records (default 100,000; 4 workloads, 2 jobs, real sampled traces, 12 %
failures, each with its own error text) through the database's own API, then times, over HTTP on 127.0.0.1:

* **first view, in process**: from ``DashboardServer(study)`` (open the study, read it whole, listen) until
  every answer the page needs to show its data has arrived: ``/``, its script and style files,
  ``/api/summary`` and ``/api/task`` of the busiest task (the one the page selects): what a browser asks for
  on opening the page, its own drawing left out (budget: 1 s); the server start alone is shown beside it;
* **first view from the command**: the same, from starting ``python -m tunefarm dashboard --db STUDY --port 0``
  (interpreter, imports, reading the study) until those answers arrived: what a user counts from pressing
  Enter, but for the browser's drawing (budget: 1 s);
* **refresh, nothing new**: ``/api/summary`` + ``/api/task`` on the warm server (budget: 100 ms);
* **refresh after a job step**: one 64-record batch committed to the busiest task (the one the page shows in
  detail), then the same two requests (budget: 100 ms);
* beside them, what a refresh would cost if it re-read the study: ``Database.records(decisions=False)``;
* **two studies** (``--db big --db local``): the same first view and refreshes over the big study and a local
  one of ``--local-records`` records (default 20,000) on the same workloads, programs and hosts, as an engineer
  re-tunes a team's workloads (the step is committed to the local study); each line gives its ratio to the
  one-study line (medians, the spread of the per-round ratios, and the ratio of the CPU medians). With
  ``--postgres`` the big study is the PostgreSQL one and the local one an SQLite file.

Every line gives the median over ``--repeats`` runs, its min-max spread and the median CPU seconds (of this
process for in-process lines: server and client; of the dashboard process for the command; with
``--postgres``, plus the PostgreSQL server's processes): on a loaded machine the wall time waits for cores,
and the CPU time says what it would take on idle ones. The load average
is printed before and after. Exits 1 if a median misses its budget.

``--postgres`` runs the same on a PostgreSQL study (a private server the benchmark starts and removes, on
loopback; needs ``tunefarm[postgres]`` and the server's binaries), vacuumed and analyzed after it is built, as
autovacuum does within a minute of a bulk insert (the visibility map lets the dashboard's aggregates read the
indexes alone).
"""
from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, REPO)

from tunefarm.dashboard import DashboardServer  # noqa: E402
from tunefarm.database import Record, open_database  # noqa: E402
from tunefarm.runtime.measure_result import MeasureResult, MeasureStatus  # noqa: E402
from tunefarm.testing.postgres_server import PostgresServer  # noqa: E402
from tunefarm.testing.synthetic_study import TARGET, build_study, sampled_traces  # noqa: E402

FIRST_VIEW, FROM_COMMAND = "first view, in process", "first view from the command"
START = "  of which server start (reads the study)"
NOTHING_NEW, STEP = "refresh, nothing new", "refresh after a 64-record step"
TWO = "two studies: "  # the same lines over two studies; each against its one-study line
BUDGETS = {FIRST_VIEW: 1.0, FROM_COMMAND: 1.0, NOTHING_NEW: 0.1, STEP: 0.1}
PAGE_FILES = ("", "static/app.js", "static/charts.js", "static/style.css")


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=60) as r:
        return r.read()


def _page_view(base: str, files: bool) -> dict:
    """What the page asks for (its files on opening, then the data); returns the summary."""
    for f in PAGE_FILES if files else ():
        _get(base + f)
    s = json.loads(_get(base + "api/summary"))
    busiest = max(s["tasks"], key=lambda t: t["n"])
    _get(base + f"api/task?workload={busiest['workload_id']}&target={busiest['target_id']}&k=10")
    return s


class Timings:
    """Wall and CPU seconds per line."""

    def __init__(self):
        self.wall: dict[str, list[float]] = {}
        self.cpu: dict[str, list[float]] = {}
        self.postmaster: int | None = None  # a PostgreSQL server whose CPU counts too

    def add(self, name: str, wall: float, cpu: float) -> None:
        self.wall.setdefault(name, []).append(wall)
        self.cpu.setdefault(name, []).append(cpu)

    def cpu_before(self) -> float:
        """CPU seconds so far, read before the timed part starts (the server's are read first)."""
        server = _server_cpu(self.postmaster)
        return server + time.process_time()

    def cpu_after(self) -> float:
        return time.process_time() + _server_cpu(self.postmaster)

    def timed(self, name: str, fn):
        c0 = self.cpu_before()
        t0 = time.perf_counter()
        out = fn()
        wall = time.perf_counter() - t0
        self.add(name, wall, self.cpu_after() - c0)
        return out

    def line(self, name: str, ref: float | None = None) -> float:
        xs, med = self.wall[name], statistics.median(self.wall[name])
        ratio = f"  {ref / med:6.1f}x faster than re-reading" if ref else ""
        if name.startswith(TWO):  # against the one-study line: the ratio of medians, and of round by round
            one = self.wall[name[len(TWO):]]
            rounds = sorted(a / b for a, b in zip(xs, one))
            cpu = statistics.median(self.cpu[name]) / statistics.median(self.cpu[name[len(TWO):]])
            ratio = (f"  {med / statistics.median(one):4.2f}x one study (rounds {rounds[0]:4.2f} - "
                     f"{rounds[-1]:4.2f}; cpu {cpu:4.2f}x)")
        print(f"{name:56s} median {med * 1e3:7.1f} ms  min-max {min(xs) * 1e3:7.1f} - {max(xs) * 1e3:7.1f} ms"
              f"  cpu {statistics.median(self.cpu[name]) * 1e3:6.1f} ms  (n={len(xs)}){ratio}")
        return med


def _first_view(path: str | list[str], t: Timings, prefix: str = "") -> None:
    c0 = t.cpu_before()
    t0 = time.perf_counter()
    server = t.timed(prefix + START, lambda: DashboardServer(path, port=0).start())
    try:
        _page_view(server.url, files=True)
        wall = time.perf_counter() - t0
        t.add(prefix + FIRST_VIEW, wall, t.cpu_after() - c0)
    finally:
        server.close()


def _refreshes(path: str | list[str], writer, repeats: int, t: Timings, prefix: str = "") -> dict:
    """``repeats`` refreshes with nothing new, then ``repeats`` after a 64-record step committed by ``writer`` to
    the busiest task (the one the page shows in detail); returns the last summary."""
    traces = sampled_traces(8, seed=11)
    ok = MeasureResult(MeasureStatus.OK, [2e-5] * 3, 0.1, None, "worker-9")
    with DashboardServer(path, port=0).start() as server:
        key = max(_page_view(server.url, files=True)["tasks"], key=lambda task: task["n"])["key"]
        for _ in range(repeats):
            t.timed(prefix + NOTHING_NEW, lambda: _page_view(server.url, files=False))
        for r in range(repeats):
            writer.commit_records([Record(key, traces[i % 8][0], f"{prefix}step-{r}-{i}", TARGET, ok, None, i)
                                   for i in range(64)])
            t.timed(prefix + STEP, lambda: _page_view(server.url, files=False))
        return json.loads(_get(server.url + "api/summary"))


def _stat(pid: int) -> list[str]:
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()  # fields from the 3rd (state) on


def _cpu_of(pid: int, children: bool = False) -> float:
    """CPU seconds a live process has used, with those of its children that ended if ``children`` (Linux
    ``/proc``; NaN elsewhere)."""
    try:
        fields = _stat(pid)
        ticks = int(fields[11]) + int(fields[12]) + (int(fields[13]) + int(fields[14]) if children else 0)
        return ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return math.nan


def _server_cpu(postmaster: int | None) -> float:
    """CPU seconds of a PostgreSQL server: the postmaster, its ended backends and its live ones (0 without one)."""
    if postmaster is None:
        return 0.0
    total = _cpu_of(postmaster, children=True)
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if int(_stat(int(entry))[1]) == postmaster:
                    total += _cpu_of(int(entry))
            except (OSError, ValueError, IndexError):
                continue
    return total


def _from_command(path: str, t: Timings) -> None:
    s0 = _server_cpu(t.postmaster)
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "tunefarm", "dashboard", "--db", path, "--port", "0"],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        url = line[line.index("http://"):].split()[0]
        _page_view(url, files=True)
        wall = time.perf_counter() - t0
        t.add(FROM_COMMAND, wall, _cpu_of(proc.pid) + _server_cpu(t.postmaster) - s0)
    finally:
        proc.send_signal(2)
        proc.communicate(timeout=60)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--postgres", action="store_true", help="a study on a private PostgreSQL server")
    ap.add_argument("--local-records", type=int, default=20_000, help="records of the second (SQLite) study")
    args = ap.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {os.cpu_count()} CPUs")
    t = Timings()
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        path = os.path.join(tmp, "big.sqlite")
        if args.postgres:
            pg = stack.enter_context(PostgresServer())
            path = pg.new_database("big")
            with open(os.path.join(pg.data, "postmaster.pid")) as f:
                t.postmaster = int(f.readline())
        t0 = time.perf_counter()
        with open_database(path) as db:
            build_study(db, args.records, n_workloads=4, n_jobs=2)
        if args.postgres:
            import psycopg  # only a --postgres run needs the client
            with psycopg.connect(path, autocommit=True) as conn:
                conn.execute("VACUUM (ANALYZE) records")
        size = "on PostgreSQL" if args.postgres else f"{os.path.getsize(path) / 2**20:.0f} MiB"
        print(f"built a study of {args.records:,} records in {time.perf_counter() - t0:.1f} s ({size})")

        local = os.path.join(tmp, "local.sqlite")
        with open_database(local) as db:  # the big study's workloads, programs and hosts, fewer records
            build_study(db, args.local_records, n_workloads=4, n_jobs=1)
        layers = [path, local]

        first_repeats = max(5, args.repeats // 2)
        for _ in range(first_repeats):  # one study and two, round by round: the ratios compare like with like
            _first_view(path, t)
            _first_view(layers, t, TWO)
            _from_command(path, t)
        writer = open_database(path)
        final = _refreshes(path, writer, args.repeats, t)
        assert final["n_records"] == args.records + 64 * args.repeats == writer.count_records()
        with open_database(local) as local_writer:
            final = _refreshes(layers, local_writer, args.repeats, t, TWO)
            assert final["n_records"] == writer.count_records() + local_writer.count_records()
            assert final["errors"] == [] and len(final["tasks"]) == 4
        for _ in range(max(3, args.repeats // 3)):
            t.timed("re-reading: records(decisions=False)", lambda: writer.records(decisions=False))
        writer.close()
    ref = statistics.median(t.wall["re-reading: records(decisions=False)"])
    failed = []
    for name in (FIRST_VIEW, START, FROM_COMMAND, NOTHING_NEW, STEP,
                 TWO + FIRST_VIEW, TWO + START, TWO + NOTHING_NEW, TWO + STEP):
        med = t.line(name, ref if name in (NOTHING_NEW, STEP) else None)
        if name in BUDGETS and med > BUDGETS[name]:
            cpu = statistics.median(t.cpu[name])
            failed.append(f"{name}: median {med * 1e3:.0f} ms > budget {BUDGETS[name] * 1e3:.0f} ms (its CPU "
                          f"median {cpu * 1e3:.0f} ms {'is within' if cpu <= BUDGETS[name] else 'misses'} it too: "
                          f"{'the machine is loaded' if cpu <= BUDGETS[name] else 'too slow'})")
    t.line("re-reading: records(decisions=False)")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("\n".join(failed) or "every median within its budget")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
