"""The dashboard's HTTP server: the page, its static files and two read-only JSON endpoints.

``http.server.ThreadingHTTPServer`` from the standard library, not aiohttp (which ray[default] happens to
install) nor a web framework: the dashboard answers a handful of GETs a few times a second, and every answer
is a database read, which is blocking work anyway (an async server would hand it to a thread). So request
threads parse and write HTTP, and all database work runs on ONE worker thread that owns the read-only
connection and the incremental aggregates (``Study``): no locks, one connection, reads in order.

Endpoints (GET only; any other method gets 405):

* ``/`` -- the page; ``/static/<name>`` -- its script and style, read from the installed package (a fixed
  allowlist: no path from a request ever reaches the filesystem);
* ``/api/summary`` -- jobs, tasks, curves, throughput and hosts (``Study.snapshot``), after reading the new
  records;
* ``/api/task?workload=<id>&target=<id>&k=<n>`` -- one task's top-k programs and decision plots.

Every response forbids inline script (``Content-Security-Policy``), so even a name that slipped past the
page's escaping could not run; the page itself only ever puts data into the DOM as text.
"""
from __future__ import annotations

import concurrent.futures
import http.server
import json
import math
import threading
import time
import urllib.parse
from importlib import resources

from tunefarm.dashboard.layered import LayeredStudy, naming
from tunefarm.dashboard.queries import StudyQueries
from tunefarm.dashboard.study import Study
from tunefarm.dashboard.workload_view import TaskDetail, task_detail
from tunefarm.database.errors import DatabaseError

STATIC = {"index.html": "text/html", "app.js": "text/javascript", "charts.js": "text/javascript",
          "style.css": "text/css", "favicon.svg": "image/svg+xml"}
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
MAX_K = 50
TASK_AFTER_SUMMARY_S = 1.0  # a task's detail reads the study again only if no refresh came this recently
REQUEST_TIMEOUT_S = 60.0


def _static(name: str) -> bytes:
    return resources.files("tunefarm.dashboard").joinpath("static", name).read_bytes()


class StudyService:
    """The thread that reads the study (or the studies, ``LayeredStudy``): every request's database work is
    queued to it."""

    def __init__(self, paths: str | list[str]):
        self.paths = [paths] if isinstance(paths, str) else list(paths)
        self.name = " + ".join(naming(p)[0] for p in self.paths)  # in output: URLs without their passwords
        self._pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="tunefarm-dashboard-db")
        self._details: dict[tuple[int, int], TaskDetail] = {}
        self._study: Study | LayeredStudy | None = None
        self._refreshed_at = -math.inf
        try:
            self._call(self._open)  # a missing or foreign file fails here, before the server binds
        except BaseException:
            self.close()
            raise

    def _call(self, fn, *args):
        return self._pool.submit(fn, *args).result(timeout=REQUEST_TIMEOUT_S)

    def _open(self) -> None:
        if len(self.paths) > 1:
            self._study = LayeredStudy(self.paths)
            self._refresh()  # every layer is read before the server listens; one that cannot be read says so
            failure = self._study.first_failure()
            if failure is not None:
                raise failure
            self.name = self._study.name
            return
        q = StudyQueries.open(self.paths[0])
        self.name = q.name
        self._study = Study(q)
        self._refresh()  # the whole study is read before the server listens: a first page is a refresh

    def _refresh(self, unless_within_s: float = 0.0) -> Study | LayeredStudy:
        """The study with the records that are new folded in, unless it was refreshed ``unless_within_s`` ago."""
        if time.monotonic() - self._refreshed_at >= unless_within_s:
            self._study.refresh()
            self._refreshed_at = time.monotonic()
        return self._study

    def layer_errors(self) -> list[str]:
        """What each layer that cannot be read says (several studies only)."""
        study = self._study
        return self._call(lambda: [x.error for x in study.layers if x.error] if isinstance(study, LayeredStudy)
                          else [])

    def records_read(self) -> int:
        """Records folded in so far."""
        if isinstance(self._study, LayeredStudy):
            return self._call(self._study.n_records)
        return self._call(lambda: sum(t.n for t in self._study.tasks.values()))

    def summary(self) -> dict:
        return self._call(lambda: self._refresh().snapshot())

    def task(self, workload_id: int, target_id: int, k: int) -> dict:
        def run():
            study = self._refresh(TASK_AFTER_SUMMARY_S)  # the page asks for a task just after the summary
            if isinstance(study, LayeredStudy):
                return study.detail(workload_id, target_id, k)
            task = study.tasks.get((workload_id, target_id))
            detail = self._details.setdefault((workload_id, target_id), TaskDetail())
            return task_detail(study.q, detail, workload_id, target_id, task.slice_ids if task else [],
                               study.workloads.get(workload_id, {}).get("flop"), k, task.n if task else 0)
        return self._call(run)

    def close(self) -> None:
        if isinstance(self._study, LayeredStudy):
            self._call(self._study.close)
        elif self._study is not None:
            self._call(self._study.q.close)
        self._pool.shutdown()


class _Handler(http.server.BaseHTTPRequestHandler):
    service: StudyService  # set on the subclass each server makes

    def log_message(self, format, *args):  # noqa: A002 - the base class's signature
        pass  # a page polling every few seconds would fill the terminal

    def _send(self, status: int, body: bytes, ctype: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype + ("; charset=utf-8" if ctype.startswith("text/") else ""))
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, data) -> None:
        self._send(status, json.dumps(data, allow_nan=False, separators=(",", ":")).encode(), "application/json")

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        url = urllib.parse.urlsplit(self.path)
        try:
            if url.path in ("/", "/index.html"):
                self._send(200, _static("index.html"), STATIC["index.html"])
            elif url.path.startswith("/static/") and url.path[8:] in STATIC:
                self._send(200, _static(url.path[8:]), STATIC[url.path[8:]])
            elif url.path == "/api/summary":
                self._json(200, self.service.summary())
            elif url.path == "/api/task":
                self._task(urllib.parse.parse_qs(url.query))
            else:
                self._json(404, {"error": f"no such page: {url.path}"})
        except DatabaseError as e:
            self._json(503, {"error": str(e).splitlines()[0]})
        except concurrent.futures.TimeoutError:
            self._json(503, {"error": "the study did not answer in time"})
        except Exception as e:  # noqa: BLE001 - one bad read answers 500; the server goes on serving
            self._json(500, {"error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"})

    do_HEAD = do_GET

    def _task(self, query: dict) -> None:
        try:
            wid, tid = int(query["workload"][0]), int(query["target"][0])
            k = min(MAX_K, max(1, int(query.get("k", ["10"])[0])))
        except (KeyError, ValueError):
            self._json(400, {"error": "expected /api/task?workload=<id>&target=<id>[&k=<n>]"})
            return
        self._json(200, self.service.task(wid, tid, k))

    def _refuse(self) -> None:
        self.send_response(405)
        self.send_header("Allow", "GET, HEAD")
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _refuse


class DashboardServer:
    """A dashboard over the study at ``path`` (or over several, a list read as ``LayeredStudy``) bound to
    ``host:port`` (port 0: any free port)."""

    def __init__(self, path: str | list[str], host: str = "127.0.0.1", port: int = 8080):
        self.service = StudyService(path)
        handler = type("Handler", (_Handler,), {"service": self.service})
        try:
            self.httpd = http.server.ThreadingHTTPServer((host, port), handler)
        except OSError:
            self.service.close()
            raise
        self.httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host if ':' not in host else f'[{host}]'}:{port}/"

    def serve_forever(self) -> None:
        self.httpd.serve_forever(poll_interval=0.2)

    def start(self) -> "DashboardServer":
        """Serve from a background thread (tests, notebooks); ``close`` stops it."""
        self._thread = threading.Thread(target=self.serve_forever, name="tunefarm-dashboard", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        if self._thread is not None:
            self.httpd.shutdown()
            self._thread.join()
        self.httpd.server_close()
        self.service.close()

    def __enter__(self) -> "DashboardServer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
