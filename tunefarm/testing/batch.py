"""Measuring a batch of ``MeasureInput``s on a farm, outside a tuning job: how tests and benchmarks build, check and
time given traces (``measure(farm, candidates)``, ``submit(farm, candidates)``).

It takes the tuning job's road: the candidates are put on the farm as work items and polled back, and each
``Done`` becomes a result through the job's one translation (``tuning.callbacks.Measured.of``). The handler is
``CANDIDATE_HANDLER`` (``measure_candidate``: the trace replayed on its workload, built, checked and timed by
the worker's ``Measurer``); a simulation's handler (``testing.simulate.SIMULATE``) can stand in for it.
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence

from ..farm import FarmError, Work
from ..farm.measure_input import MeasureInput
from ..farm.measure import worker_measurer
from ..farm.work import WorkerContext, check_handler_name
from ..runtime.measure_result import MeasureResult
from ..target import Target
from ..tuning.callbacks import Measured

CANDIDATE_HANDLER = "tunefarm.testing.batch:measure_candidate"


def measure_candidate(payload: list, ctx: WorkerContext) -> dict:
    """A batch's measure handler: ``payload`` is ``MeasureInput.to_wire("")``, the workload text is in
    ``ctx.shared`` under the workload key; the reply has the job's measure handler's shape."""
    cand = MeasureInput.from_payload(payload, ctx.shared)
    with worker_measurer(ctx) as measurer:
        return {"result": measurer.measure(cand, ctx.clock).to_dict()}


def submit(farm, candidates: Sequence[MeasureInput], handler: str = CANDIDATE_HANDLER
           ) -> Iterator[tuple[int, MeasureResult]]:
    """Yield ``(index, result)`` for every candidate, in completion order. The candidates are on the farm when
    this returns; closing the iterator early (or dropping it) drops what is still pending."""
    check_handler_name(handler)
    cands = _checked(farm, candidates)
    if farm.pending:
        raise FarmError(f"{farm.pending} items put on this farm are still pending; poll them all before "
                        "measuring a batch")
    texts: dict[str, str] = {}
    for i, c in enumerate(cands):
        text = texts.get(c.workload_key)
        if text is None:
            text = texts[c.workload_key] = c.with_workload_text().workload_json
        farm.put(Work(handler, list(c.to_wire("")), c.timeout_s, shared={c.workload_key: text}, tag=(i, c)))
    return _results(farm, len(cands))


def measure(farm, candidates: Sequence[MeasureInput], handler: str = CANDIDATE_HANDLER) -> list[MeasureResult]:
    """Measure all candidates; results in the candidates' order."""
    results: list[MeasureResult | None] = [None] * len(candidates)
    for i, r in submit(farm, candidates, handler):
        if results[i] is not None:
            raise FarmError(f"farm returned two results for candidate {i}")
        results[i] = r
    missing = [i for i, r in enumerate(results) if r is None]
    if missing:
        raise FarmError(f"farm returned no result for candidates {missing[:10]}")
    return results  # type: ignore[return-value]


def _results(farm, n: int) -> Iterator[tuple[int, MeasureResult]]:
    try:
        while n:
            for done in farm.poll(None):
                n -= 1
                i, cand = done.work.tag
                result = Measured.of(done, cand, 0).result
                farm.record_trial(result, cand.task)
                yield i, result
    finally:
        if farm.pending:  # abandoned mid-batch (the consumer stopped, Ctrl-C) or a FarmError
            farm.abandon()


def _checked(farm, candidates: Sequence[MeasureInput]) -> list[MeasureInput]:
    cands = list(candidates)
    mine = farm.target
    for i, c in enumerate(cands):
        if not isinstance(c, MeasureInput):
            raise TypeError(f"candidate {i} is a {type(c).__name__}, expected tunefarm.farm.MeasureInput")
        try:
            t = Target(c.target)
        except (TypeError, ValueError) as e:
            raise ValueError(f"bad candidate target {c.target!r}: {e}") from None
        if t.cpu != mine.cpu or t.features != mine.features:
            raise ValueError(f"candidate {i} is for target {c.target!r} but this farm measures on {mine} (a "
                             "different CPU); use a farm whose nodes match")
    return cands
