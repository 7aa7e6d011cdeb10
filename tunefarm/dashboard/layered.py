"""Several studies shown as one (``tunefarm dashboard --db mine.sqlite --db postgresql://...``), by the rules of
``database.LayeredDatabase``, so that the page and ``tunefarm best --db A --db B`` agree.

Each layer is a ``Study`` with its own incremental refresh (an SQLite file by the last id read, a PostgreSQL
study by its holes and final id); the page's data is merged from their running totals at each snapshot:

* workloads are matched across layers by key, targets by their text (as the store's ``top_k`` finds them); a
  task is a workload key on a target, numbered by this view (each layer numbers its rows its own way), and
  named as the first layer that has it names it (``LayeredDatabase.workloads`` keeps the first row of a key);
* a task's counts, statuses and errors are the layers' summed (as ``count_records`` sums its members), its best
  the least; its best-so-far curves are drawn per layer (a trial number counts the records of one layer);
* jobs are each layer's, labelled with the layer's name (job ids collide across layers); a job imported into a
  later layer shows once, from the earlier one (``LayeredDatabase.jobs`` keeps the first row of a uid);
* hosts are merged by name, their medians taken over the union of the layers' records (``merged_median``);
* a task's top-k is each layer's top-k merged as ``LayeredDatabase.top_k`` merges them (``merge_top``).

A layer that cannot be read (a missing file, a server that went away) is named in a one-line error (a URL
without its password) and shows nothing until it reads again; the others still show.
"""
from __future__ import annotations

import collections
import time
import urllib.parse

from tunefarm.dashboard.queries import BUILD_TIMES, RUN_TIMES, StudyQueries, mixed_id
from tunefarm.dashboard.study import MEDIAN_GROWTH, SLICE_CAP, Study, Tally, throughput
from tunefarm.dashboard.workload_view import TaskDetail, program
from tunefarm.database.base import URL_SCHEMES
from tunefarm.database.errors import DatabaseError
from tunefarm.database.layered import merge_ranked

ERROR_CHARS = 300


def naming(path: str) -> tuple[str, list[str]]:
    """How a layer is named before it opens (a URL without its password), and the secrets its errors must hide."""
    if not path.startswith(URL_SCHEMES):
        return path, []
    try:
        # psycopg is optional: the PostgreSQL client's module finds a URL's password, where it is installed
        from tunefarm.database import pg_connection
    except ImportError:  # without the client such a layer cannot open at all: name it without any user part
        parts = urllib.parse.urlsplit(path)
        return f"{parts.scheme}://{parts.netloc.rsplit('@', 1)[-1]}{parts.path}", []
    return pg_connection.redact(path), pg_connection.secrets_of(path)


class _Layer:
    """One study of the view: its name, its ``Study`` once opened, the id maps into the view, its last error."""

    def __init__(self, index: int, path: str):
        self.index, self.path = index, path
        self.name, self._secrets = naming(path)
        self.study: Study | None = None
        self.error: str | None = None
        self.failure: Exception | None = None
        self.wmap: dict[int, int] = {}  # the layer's workload id -> the view's
        self.tmap: dict[int, int] = {}  # the layer's target id -> the view's

    def refresh(self) -> None:
        try:
            if self.study is None:
                self.study = Study(StudyQueries.open(self.path))
            self.study.refresh()
            self.error = self.failure = None
        except Exception as e:  # noqa: BLE001 - a layer that cannot be read is shown as such; the others go on
            self.failed(e)

    def failed(self, e: Exception) -> None:
        """Note a failure as one line that names the layer and hides its password."""
        lines = str(e).strip().splitlines()
        line = lines[0].strip() if lines else ""
        if not isinstance(e, DatabaseError):
            line = f"{type(e).__name__}: {line}"
        for secret in self._secrets:
            line = line.replace(secret, "***")
        self.failure = e
        self.error = (line if self.name in line else f"{self.name}: {line}")[:ERROR_CHARS]

    def task_of(self, view_wid: int, view_tid: int) -> tuple[int, int] | None:
        """The layer's ids of a task of the view, if the layer has it."""
        wid = next((w for w, v in self.wmap.items() if v == view_wid), None)
        tid = next((t for t, v in self.tmap.items() if v == view_tid), None)
        return None if wid is None or tid is None else (wid, tid)


def _asker(layer: _Layer, host: str):
    """``values_around`` of one host on a layer, noting a failure on the layer."""
    def ask(column: str, where: str, lo: float, hi: float) -> tuple[int, list[float]]:
        try:
            return layer.study.q.values_around(host, column, where, lo, hi)
        except Exception as e:
            layer.failed(e)
            raise
    return ask


def _sample(parts: list[tuple]) -> list[tuple[int, int]]:
    """``(layer index, record id)`` of the layers' samples of a task at one stride, so that the union is about
    ``SLICE_CAP`` records as one study's sample is: each layer samples the ids whose ``mixed_id`` is a multiple
    of its power-of-two stride, so a larger common stride keeps a subset of each, evenly."""
    stride = max((task.stride for *_, task in parts), default=1)
    while True:
        keep = []
        for layer, _, task in parts:
            ids = task.slice_ids if task.stride == stride else [i for i in task.slice_ids if mixed_id(i) % stride == 0]
            keep += [(layer.index, rid) for rid in ids]
        if len(keep) <= SLICE_CAP:
            return keep
        stride *= 2


def merge_top(tops: list[tuple[_Layer, list[tuple]]], k: int) -> list[tuple[_Layer, tuple]]:
    """Each layer's ``StudyQueries.top_k`` rows, in layer order, merged by ``LayeredDatabase.top_k``'s rule
    (``merge_ranked``); a row's rank is ``Record.rank``'s: (not confirmed, the confirmed median or else the
    farm's)."""
    return [item for _, item in merge_ranked(
        ((layer.index, [(row[6], (row[7] is None, row[2] if row[7] is None else row[7]), row[0], (layer, row))
                        for row in rows]) for layer, rows in tops), k)]


def merged_median(column: str, where: str, parts: list[tuple]) -> float | None:
    """The lower median of a host's values over several layers, given each layer's ``(ask, count, lower
    median)`` (``ask(column, where, lo, hi)``: ``StudyQueries.values_around`` of that host). The union's median
    lies between the least and the greatest of the layers' medians, so each layer is asked only for its values
    in that range and for how many lie below it."""
    parts = [(ask, n, m) for ask, n, m in parts if n and m is not None]
    if len(parts) < 2:
        return parts[0][2] if parts else None
    lo, hi = min(m for _, _, m in parts), max(m for _, _, m in parts)
    below, inside = 0, []
    for ask, _, _ in parts:
        b, values = ask(column, where, lo, hi)
        below += b
        inside += values
    inside.sort()
    rank = (sum(n for _, n, _ in parts) - 1) // 2 - below
    return inside[min(max(rank, 0), len(inside) - 1)]  # clamped: a layer may have grown since its counts


class LayeredStudy:
    """The studies at ``paths`` as one view (see the module docstring); used by one thread at a time."""

    def __init__(self, paths: list[str]):
        self.layers = [_Layer(i, p) for i, p in enumerate(paths)]
        self.workload_ids: dict[str, int] = {}  # workload key -> the view's id (ids are never reused)
        self.target_ids: dict[str, int] = {}  # target -> the view's id
        self.workloads: dict[int, dict] = {}  # the view's id -> the first layer's {"key", "name", "flop"}
        self.targets: dict[int, tuple[str, str]] = {}  # the view's id -> (target, label)
        self.medians: dict[str, tuple] = {}  # host -> (its layers, its records over them, (build, run medians))
        self.details: dict[tuple[int, int], TaskDetail] = {}

    @property
    def name(self) -> str:
        return " + ".join(layer.name for layer in self.layers)

    def live(self) -> list[_Layer]:
        return [layer for layer in self.layers if layer.study is not None and layer.error is None]

    def refresh(self) -> None:
        """Each layer folds in what is new to it; a layer that fails notes its error, the others go on."""
        for layer in self.layers:
            layer.refresh()
        self._match()
        self._merge_medians()

    def first_failure(self) -> Exception | None:
        """The first layer's error when no layer could be read (then there is nothing to show)."""
        return self.layers[0].failure if all(layer.failure is not None for layer in self.layers) else None

    def n_records(self) -> int:
        return sum(t.n for layer in self.live() for t in layer.study.tasks.values())

    def _match(self) -> None:
        """Number the layers' workloads by key and targets by text, in the view's ids."""
        self.workloads, self.targets = {}, {}
        for layer in self.live():
            st = layer.study
            layer.wmap = {wid: self.workload_ids.setdefault(w["key"], len(self.workload_ids) + 1)
                          for wid, w in sorted(st.workloads.items())}
            layer.tmap = {tid: self.target_ids.setdefault(t[0], len(self.target_ids) + 1)
                          for tid, t in sorted(st.targets.items())}
            for wid, view in layer.wmap.items():
                self.workloads.setdefault(view, st.workloads[wid])
            for tid, view in layer.tmap.items():
                self.targets.setdefault(view, st.targets[tid])

    def _merge_medians(self) -> None:
        """The medians of hosts that several layers have, again when the host's records over those layers grew
        by ``MEDIAN_GROWTH`` (as one study's are; a small layer that grows fast does not make the others be read
        at each refresh)."""
        shared = collections.defaultdict(list)
        for layer in self.live():
            for host in layer.study.host_statuses:
                shared[host].append(layer)
        for host, layers in shared.items():
            n = sum(sum(layer.study.host_statuses[host].values()) for layer in layers)
            which, before = self.medians.get(host, (None, 0, None))[:2]
            if len(layers) < 2 or (which == tuple(x.index for x in layers) and n < before * MEDIAN_GROWTH):
                continue
            try:
                counts = [(_asker(layer, host), layer.study.host_medians.get(host, (None, None)),
                           sum(layer.study.host_statuses[host].values()), layer.study.host_timed[host])
                          for layer in layers]
                build = merged_median(*BUILD_TIMES, [(ask, n, med[0]) for ask, med, n, _ in counts])
                run = merged_median(*RUN_TIMES, [(ask, timed, med[1]) for ask, med, _, timed in counts])
            except Exception:  # noqa: BLE001 - the layer that failed is shown so (``_asker``); it reads again later
                continue
            self.medians[host] = (tuple(x.index for x in layers), n, (build, run))

    # -- what the page shows -------------------------------------------------------------------------------
    def _task_ref(self, wid: int, tid: int) -> dict:
        w = self.workloads.get(wid, {})
        target, label = self.targets.get(tid, ("", ""))
        return {"workload_id": wid, "target_id": tid, "workload": w.get("name", f"#{wid}"),
                "key": w.get("key", ""), "target": target, "target_label": label}

    def _jobs(self, now_us: int) -> tuple[list[dict], list[tuple[dict, collections.Counter]]]:
        """Every layer's jobs (a uid once, from the earliest layer) and their throughput bins."""
        shown, jobs, bins = set(), [], []
        for layer in self.live():
            st = layer.study
            try:
                uids, rows = st.q.job_uids(), st.q.jobs()
            except Exception as e:  # noqa: BLE001 - as in a refresh: this layer is shown failed
                layer.failed(e)
                continue
            mine = set()
            for row in rows:
                uid = uids.get(row[0])
                if uid is not None and uid in shown:
                    continue
                shown.add(uid)  # a job without a uid is never taken for another (kept, as the views keep it)
                mine.add(row[0])
                job = st.job_view(row, now_us)
                tasks = [t for t in job["tasks"] if t["workload_id"] in layer.wmap and t["target_id"] in layer.tmap]
                for t in tasks:
                    t.update(self._task_ref(layer.wmap[t["workload_id"]], layer.tmap[t["target_id"]]))
                jobs.append({**job, "tasks": sorted(tasks, key=lambda t: (t["workload_id"], t["target_id"])),
                             "study": layer.name, "layer": layer.index})
            for job, counts in sorted(st.bins.items(), key=lambda kv: (kv[0] is None, kv[0] or 0)):
                if job is None or job in mine:
                    bins.append(({"job": job, "study": layer.name, "layer": layer.index}, counts))
        jobs.sort(key=lambda j: (j["started_us"] or 0, j["layer"], j["id"]))
        return jobs, bins

    def _tasks(self) -> list[dict]:
        merged: dict[tuple[int, int], tuple[Tally, list]] = {}
        for layer in self.live():
            for (wid, tid), task in sorted(layer.study.tasks.items()):
                if wid not in layer.wmap or tid not in layer.tmap:
                    continue  # a name not read yet (it is read with the layer's next refresh)
                tally, curves = merged.setdefault((layer.wmap[wid], layer.tmap[tid]), (Tally(), []))
                tally.n += task.n
                tally.statuses.update(task.statuses)
                tally.errors.update(task.errors)
                tally.best = min(tally.best, task.best)
                if task.curve:
                    curves.append({"study": layer.name, **task.curve_view()})
        return [{**self._task_ref(wid, tid), **tally.as_dict(self.workloads.get(wid, {}).get("flop")),
                 "curves": curves} for (wid, tid), (tally, curves) in sorted(merged.items())]

    def _hosts(self) -> list[dict]:
        statuses: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        own: dict[str, list[tuple]] = collections.defaultdict(list)
        for layer in self.live():
            for host, counts in layer.study.host_statuses.items():
                statuses[host].update(counts)
                own[host].append(layer.study.host_medians.get(host, (None, None)))
        out = []
        for host, counts in sorted(statuses.items()):
            build, run = own[host][0] if len(own[host]) == 1 else self.medians.get(host, ((), 0, (None, None)))[2]
            n = sum(counts.values())
            out.append({"host": host, "n": n, "statuses": dict(counts), "errors": n - counts.get("ok", 0),
                        "build_s": build, "run_s": run})
        return out

    def snapshot(self) -> dict:
        """What the page's overview shows, as ``Study.snapshot`` gives it for one study, plus each layer's name,
        size and error (jobs and throughput series say which layer they are from)."""
        now_us = time.time_ns() // 1000
        jobs, bins = self._jobs(now_us)
        layers = [{"name": layer.name, "error": layer.error,
                   "n_records": sum(t.n for t in layer.study.tasks.values()) if layer in self.live() else 0,
                   "last_record_id": layer.study.last_id if layer in self.live() else 0} for layer in self.layers]
        return {"now_us": now_us, "n_records": sum(x["n_records"] for x in layers), "layers": layers,
                "errors": [layer.error for layer in self.layers if layer.error],
                "jobs": jobs, "tasks": self._tasks(), "throughput": throughput(bins, now_us), "hosts": self._hosts()}

    def detail(self, wid: int, tid: int, k: int) -> dict:
        """One task's top-k over the layers (``merge_top``) and its decision plots over their samples, thinned
        to about ``SLICE_CAP`` as one study's (``_sample``); the cache keys a record by (layer, id)."""
        parts = []
        for layer in self.live():
            ids = layer.task_of(wid, tid)
            task = layer.study.tasks.get(ids) if ids else None
            if task is not None:
                parts.append((layer, ids, task))
        cache = self.details.setdefault((wid, tid), TaskDetail())
        n_records = tuple((layer.index, task.n) for layer, _, task in parts)
        if cache.shown is not None and cache.shown[0] == (n_records, k):
            return cache.shown[1]
        sample = _sample(parts)
        tops = []
        for layer, ids, task in parts:
            q = layer.study.q
            try:
                rows = q.top_k(*ids, k)
                missing = [rid for i, rid in sample if i == layer.index and (i, rid) not in cache.rows]
                cache.add([((layer.index, r[0]), r[1], r[2]) for r in q.traces_of(missing)]
                          + [((layer.index, r[0]), r[1], r[2]) for r in rows if (layer.index, r[0]) not in cache.rows])
            except Exception as e:  # noqa: BLE001 - the layer is shown failed; the others' programs still show
                layer.failed(e)
                continue
            tops.append((layer, rows))
        top = merge_top(tops, k)
        flop = self.workloads.get(wid, {}).get("flop")
        keys = list(dict.fromkeys(sample + [(layer.index, row[0]) for layer, row in top]))
        answer = {"workload_id": wid, "target_id": tid,
                  "top": [{**program(row, flop), "study": layer.name} for layer, row in top],
                  "decisions": cache.decisions(keys), "n_sampled": len(keys)}
        cache.shown = ((n_records, k), answer)
        return answer

    def close(self) -> None:
        for layer in self.layers:
            if layer.study is not None:
                layer.study.q.close()
