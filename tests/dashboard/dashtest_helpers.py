"""Helpers of the dashboard tests: HTTP requests, and a workload named like an XSS payload."""
from __future__ import annotations

import json
import urllib.error
import urllib.request

from tunefarm.database import Database, Record
from tunefarm.runtime.measure_result import MeasureResult, MeasureStatus
from tunefarm.testing.synthetic_study import TARGET, sampled_traces

HOSTILE = "<img src=x onerror=alert(1)>"


def get(url: str, method: str = "GET", data: bytes | None = None) -> tuple[int, dict, bytes]:
    """``(status, headers, body)`` of one request (error statuses included)."""
    req = urllib.request.Request(url, method=method, data=data)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def get_json(url: str):
    status, _, body = get(url)
    assert status == 200, body
    return json.loads(body)


def add_hostile(db: Database, n: int = 12, job: int | None = None) -> str:
    """A workload named like an XSS payload, with ``n`` records (a few failing with a hostile error)."""
    key = "hostile-workload"
    db.commit_workload(key, HOSTILE, '{"hostile": true}', 1e6)
    recs = []
    for i, (trace, factor) in enumerate(sampled_traces(n, seed=7)):
        if i % 4 == 3:
            result = MeasureResult(MeasureStatus.BUILD_ERROR, [], 0.1, f"{HOSTILE} <script>x()</script>", HOSTILE)
        else:
            result = MeasureResult(MeasureStatus.OK, [1e-5 * factor] * 3, 0.1, None, "host-a")
        recs.append(Record(key, trace, f"hostile-{i}", TARGET, result, job, i))
    db.commit_records(recs)
    return key
