"""Training the cost model: labels, cross-validated quality and boosting, as a pure function of plain data.

``fit(payload)`` takes what ``XGBCostModel.training_payload()`` packs (float32 feature rows, workload groups,
latencies, settings) and returns the booster in XGBoost's own binary format (base64) with the quality metrics.
It runs on a farm worker during a tuning job, so training never blocks the search (or in the calling process
through ``XGBCostModel.train``); on a worker, ``TrainingSets`` keeps the samples so that a retraining is sent only
the new ones. The modelling choices (labels, log targets, 5-fold cross-validation, fixed
boosting rounds) are explained in ``cost_model.py``.
"""
from __future__ import annotations

import base64
import dataclasses
import math

import numpy as np

MIN_PER_FOLD = 4  # cross-validated metrics need this many samples per fold


@dataclasses.dataclass
class ModelMetrics:
    """Quality of the last training, measured on held-out candidates."""

    n_train: int = 0
    n_heldout: int = 0
    rounds: int = 0
    pairwise_accuracy: float = math.nan      # pairs of held-out candidates (same workload) ordered correctly
    pairwise_accuracy_ok: float = math.nan   # the same, over successful candidates only
    top_k_recall: float = math.nan           # share of the true held-out top-k found in the predicted top-k
    k: int = 0

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


def pairwise_accuracy(pred: np.ndarray, label: np.ndarray, group: np.ndarray, only_positive: bool = False) -> float:
    """Fraction of same-group pairs with different labels that ``pred`` orders like ``label`` (a tie in
    ``pred`` counts as wrong)."""
    good, total = pair_counts(pred, label, group, only_positive)
    return good / total if total else math.nan


def pair_counts(pred: np.ndarray, label: np.ndarray, group: np.ndarray, only_positive: bool = False) -> tuple:
    """``(ordered right, total)`` over same-group pairs with different labels (summable across folds)."""
    good = total = 0
    for g in np.unique(group):
        m = group == g
        p, y = pred[m], label[m]
        if only_positive:
            keep = y > 0
            p, y = p[keep], y[keep]
        if len(y) < 2:
            continue
        dy = np.sign(y[:, None] - y[None, :])
        dp = np.sign(p[:, None] - p[None, :])
        mask = np.triu(dy != 0, 1)
        total += int(mask.sum())
        good += int(((dy == dp) & mask).sum())
    return good, total


def top_k_recall(pred: np.ndarray, label: np.ndarray, group: np.ndarray, k: int) -> float:
    """Mean over groups of |true top-k ∩ predicted top-k| / k (only successful candidates count as true)."""
    vals = []
    for g in np.unique(group):
        m = group == g
        p, y = pred[m], label[m]
        kk = min(k, int((y > 0).sum()))
        if kk == 0:
            continue
        true_top = set(np.argsort(-y, kind="stable")[:kk].tolist())
        pred_top = set(np.argsort(-p, kind="stable")[:kk].tolist())
        vals.append(len(true_top & pred_top) / kk)
    return float(np.mean(vals)) if vals else math.nan


def labels(lat: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Throughput normalized per workload: ``best / latency`` in (0, 1], 0 for a failure."""
    y = np.zeros(len(lat))
    for g in np.unique(groups):
        m = groups == g
        best = lat[m].min()
        if math.isfinite(best):
            y[m] = np.where(np.isfinite(lat[m]), best / lat[m], 0.0)
    return y


def log_targets(y: np.ndarray, group_ids: np.ndarray) -> np.ndarray:
    """Regression targets: log of the normalized throughput; a failure one unit below its group's worst."""
    t = np.zeros(len(y))
    for g in np.unique(group_ids):
        m = group_ids == g
        ok = y[m] > 0
        floor = (np.log(y[m][ok]).min() if ok.any() else 0.0) - 1.0
        t[m] = np.where(ok, np.log(np.where(ok, y[m], 1.0)), floor)
    return t


def folds(x: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """The fold of each sample: random, but samples with identical feature rows always share one."""
    _, twin = np.unique(x, axis=0, return_inverse=True)
    twin = np.asarray(twin).reshape(-1)
    n_twins = int(twin.max()) + 1
    fold_of = np.empty(n_twins, dtype=np.int64)
    fold_of[rng.permutation(n_twins)] = np.arange(n_twins) % k
    return fold_of[twin]


def booster_params(objective: str, seed: int, nthread: int) -> dict:
    p = {"eta": 0.05, "max_depth": 6, "min_child_weight": 3.0, "subsample": 0.8, "colsample_bytree": 0.5,
         "gamma": 0.0, "lambda": 1.0, "nthread": nthread, "seed": seed, "tree_method": "hist",
         "verbosity": 0, "disable_default_eval_metric": 1}
    if objective == "rank":
        p.update({"objective": "rank:pairwise", "lambdarank_pair_method": "mean",
                  "lambdarank_num_pair_per_sample": 16})
    else:
        p.update({"objective": "reg:squarederror"})
    return p


def _boost(params: dict, rounds: int, objective: str, x, y, gid):
    import xgboost as xgb

    # DMatrix construction and prediction use XGBoost's global thread count, not the booster's: pin it too, or
    # an OpenMP team spins for milliseconds after each call on the cores other workers are timing kernels on
    with xgb.config_context(nthread=params["nthread"]):
        if objective == "rank":
            order = np.argsort(gid, kind="stable")
            dtrain = xgb.DMatrix(x[order], label=y[order], qid=gid[order])
        else:
            dtrain = xgb.DMatrix(x, label=log_targets(y, gid))
        return xgb.train(params, dtrain, rounds, verbose_eval=False)


def _cross_validate(params, s, x, y, gid, fold) -> ModelMetrics:
    import xgboost as xgb

    metrics = ModelMetrics(n_train=len(y), rounds=s["rounds"], k=s["top_k"])
    good = total = good_ok = total_ok = 0
    recalls = []
    for f in range(s["folds"]):
        hold, fit_ = np.nonzero(fold == f)[0], np.nonzero(fold != f)[0]
        if len(hold) < 2 or not len(fit_):
            continue
        booster = _boost(params, s["rounds"], s["objective"], x[fit_], y[fit_], gid[fit_])
        with xgb.config_context(nthread=params["nthread"]):
            pred = booster.inplace_predict(x[hold])
        g, t = pair_counts(pred, y[hold], gid[hold])
        good, total = good + g, total + t
        g, t = pair_counts(pred, y[hold], gid[hold], only_positive=True)
        good_ok, total_ok = good_ok + g, total_ok + t
        r = top_k_recall(pred, y[hold], gid[hold], s["top_k"])
        if not math.isnan(r):
            recalls.append(r)
        metrics.n_heldout += len(hold)
    metrics.pairwise_accuracy = good / total if total else math.nan
    metrics.pairwise_accuracy_ok = good_ok / total_ok if total_ok else math.nan
    metrics.top_k_recall = float(np.mean(recalls)) if recalls else math.nan
    return metrics


def fit(payload: dict) -> dict:
    """Cross-validate (the metrics), then boost the serving model on every sample of a whole payload
    (``since`` 0).

    Returns ``{"model": base64 of the booster (XGBoost UBJSON), "metrics": ModelMetrics as a dict, "n": samples}``.
    """
    if payload.get("since", 0):
        raise ValueError(f"fit needs every sample (since 0); this payload starts at sample {payload['since']!r}")
    x, lat, gid = decode_samples(payload)
    return fit_samples(x, lat, gid, payload["settings"])


def decode_samples(payload: dict) -> tuple:
    """The payload's feature rows (float32), latencies (inf for a failure) and workload group ids."""
    n = int(payload["n"])
    x = np.frombuffer(base64.b64decode(payload["x"]), dtype=np.float32).reshape(n, -1)
    lat = np.asarray([math.inf if v is None else v for v in payload["latencies"]], dtype=np.float64)
    gid = np.asarray(payload["groups"], dtype=np.int64)
    if len(lat) != n or len(gid) != n:
        raise ValueError(f"a training payload of {n} feature rows has {len(lat)} latencies and {len(gid)} groups")
    return x, lat, gid


def fit_samples(x: np.ndarray, lat: np.ndarray, gid: np.ndarray, s: dict) -> dict:
    """``fit`` on decoded samples."""
    n = len(x)
    y = labels(lat, gid)
    params = booster_params(s["objective"], s["seed"], s["nthread"])
    if n >= s["folds"] * MIN_PER_FOLD:
        metrics = _cross_validate(params, s, x, y, gid, folds(x, s["folds"], np.random.default_rng(s["fold_seed"])))
    else:
        metrics = ModelMetrics(n_train=n, rounds=s["rounds"], k=s["top_k"])
    booster = _boost(params, s["rounds"], s["objective"], x, y, gid)
    raw = booster.save_raw(raw_format="ubj")
    return {"model": base64.b64encode(bytes(raw)).decode("ascii"), "metrics": metrics.as_dict(), "n": n}


class TrainingSets:
    """The samples a worker was sent for each model (by ``payload["samples"]``), so that a retraining sends only
    the samples added since (``XGBCostModel.training_payload(since)``). Re-sending all of them each time was
    most of what training cost the driver: packing, encoding and shipping a payload that grows with the job.

    A worker keeps the sets of the last ``keep`` models (a job has one; more are earlier jobs'). ``fit`` answers
    ``{"missing": k}`` (k: the samples it holds) when it lacks some of the samples before ``since`` (it started
    after they were sent): the job then sends them all.
    """

    def __init__(self, keep: int = 2):
        self.keep = keep
        self._sets: dict[str, tuple] = {}

    def held(self, uid: str) -> int:
        got = self._sets.get(uid)
        return 0 if got is None else len(got[0])

    def fit(self, payload: dict) -> dict:
        uid, since = payload.get("samples"), int(payload.get("since", 0))
        if since < 0:
            raise ValueError(f"a training payload's since must be >= 0, got {since!r}")
        if uid is None:
            return fit(payload)
        if since > self.held(uid):
            return {"missing": self.held(uid)}
        x, lat, gid = decode_samples(payload)
        if since:  # (it may hold more than ``since``: samples are only ever appended, so those are the same)
            x, lat, gid = (np.concatenate([kept[:since], new]) for kept, new in zip(self._sets[uid], (x, lat, gid)))
        self._sets.pop(uid, None)
        self._sets[uid] = (x, lat, gid)  # the newest last
        while len(self._sets) > self.keep:
            self._sets.pop(next(iter(self._sets)))
        return fit_samples(x, lat, gid, payload["settings"])
