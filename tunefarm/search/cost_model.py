"""The XGBoost cost model: ranks unmeasured candidates so the farm only times promising ones.

What it learns: within one workload, which program is faster. Labels are throughput normalized per workload
(``best latency / latency`` in (0, 1]; a failed candidate is 0, the worst), so workloads of very different
sizes share one model without competing. The default objective regresses the *log* of that label with
squared error (failures one unit of log below the slowest success): a 2x gap then weighs the same among slow
and fast programs, where plain throughput squeezes the slow half of the space into a sliver near 0.
``objective="rank"`` uses ``rank:pairwise`` on the labels with one query group per workload. The label of a
candidate is its fastest repeat (on a busy machine the others are inflated by preemption).

Every (re)training measures its quality by k-fold cross-validation (5 folds): each fold of the samples is
held out once, a model boosted on the other four predicts it, and the pairwise accuracy counts the pairs
inside each held-out fold (plain accuracy, all pairs, failures included) -- every candidate is held out once,
so the logged figure rests on five times the pairs of the single 20% split it replaces (that one swung
0.63-0.83 on one 256-trial matmul job). Candidates with identical feature vectors share a fold, so held-out
programs are never twins of training ones. The model that serves the search is then boosted on everything.
Boosting runs a fixed ``rounds`` (60): early stopping on a few hundred noisy samples mostly chose 20-40
rounds by chance, and on 31 stored 256-trial matmul jobs 60, 100 and 200 fixed rounds and early stopping with
a floor of 60 all ranked within 0.003 of each other (0.792-0.794, 10 random 80/20 splits each). Depth 3-8,
eta, min_child_weight 1-8, column sampling, plain throughput (0.787), ``rank:pairwise`` (0.775; 0.65 with
top-k pairs), robust losses (absolute 0.789, quantile 0.778-0.788), labels from the median or mean of the
repeats (0.786-0.793) instead of the fastest, and bagging five models (+0.0015) were measured on the same jobs
and none beat this setting by more than the split noise: the labels, not the learner, limit it (a program's
measurement in another job predicts its label better, 0.82-0.87, than any model did). Feature version 3
(register facts of the micro-kernel, copies ranked by their iterations) raised the same 10-split accuracy on
every stored set by 0.003-0.008: 21 fresh matmul-128 jobs 0.796 -> 0.799, dense-relu-784-128 0.825 -> 0.828,
matmul-512 0.666 -> 0.669. Until
``min_train_samples`` successful measurements exist the model is untrained and ``predict`` returns random
scores (random picks). Models are saved in XGBoost's own JSON format plus a JSON sidecar (never pickle).
"""
from __future__ import annotations

import dataclasses
import json
import logging
import math
import os

import numpy as np

from .features import FEATURE_LEN, FEATURE_VERSION

log = logging.getLogger("tunefarm.search.cost_model")


class CostModelError(Exception):
    """A cost model file that cannot be loaded, or inputs of the wrong shape."""


def _as_matrix(features) -> np.ndarray:
    """Feature rows as the C-contiguous float32 matrix XGBoost copies fastest into a DMatrix."""
    x = np.asarray(features, dtype=np.float32) if len(features) else np.zeros((0, FEATURE_LEN), np.float32)
    if x.size % FEATURE_LEN:
        raise CostModelError(f"feature rows must have {FEATURE_LEN} columns (feature version {FEATURE_VERSION}), "
                             f"got an array of shape {x.shape}")
    return np.ascontiguousarray(x.reshape(-1, FEATURE_LEN))


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


class XGBCostModel:
    """Learned ranking of schedules (see module doc). ``update`` adds measurements, ``predict`` scores.

    ``retrain_every``: retrain after this many new samples (training is cheap next to measuring, so the
    default retrains after every measured batch of a few candidates). ``rounds``: boosting rounds of every
    model; ``folds``: the k of the cross-validated quality metrics (computed once there are ``MIN_PER_FOLD``
    samples per fold).
    """

    MIN_PER_FOLD = 4

    def __init__(self, objective: str = "regression", seed: int = 0, min_train_samples: int = 16,
                 retrain_every: int = 16, rounds: int = 60, folds: int = 5, top_k: int = 8,
                 nthread: int | None = None):
        if objective not in ("rank", "regression"):
            raise ValueError(f"objective must be 'rank' or 'regression', got {objective!r}")
        if rounds < 1:
            raise ValueError(f"rounds must be at least 1, got {rounds!r}")
        if folds < 2:
            raise ValueError(f"folds must be at least 2 (one held out, the rest to train on), got {folds!r}")
        self.objective = objective
        self.seed = seed
        self.min_train_samples = min_train_samples
        self.retrain_every = retrain_every
        self.rounds = rounds
        self.folds = folds
        self.top_k = top_k
        self.nthread = nthread or 1
        self._rng = np.random.default_rng(seed)
        self._x: list[np.ndarray] = []
        self._groups: list[str] = []
        self._lat: list[float] = []  # seconds; inf for failures
        self._since_train = 0
        self._booster = None
        self.metrics = ModelMetrics()
        self.history: list[dict] = []

    # ---------------------------------------------------------------------------------------------------
    @property
    def is_trained(self) -> bool:
        return self._booster is not None

    @property
    def predicts_log_throughput(self) -> bool:
        """Scores are ``log(best latency / latency)`` (the regression objective), comparable to measurements."""
        return self.objective == "regression"

    @property
    def n_samples(self) -> int:
        return len(self._x)

    def _params(self) -> dict:
        p = {"eta": 0.05, "max_depth": 6, "min_child_weight": 3.0, "subsample": 0.8, "colsample_bytree": 0.5,
             "gamma": 0.0, "lambda": 1.0, "nthread": self.nthread, "seed": self.seed, "tree_method": "hist",
             "verbosity": 0, "disable_default_eval_metric": 1}
        if self.objective == "rank":
            p.update({"objective": "rank:pairwise", "lambdarank_pair_method": "mean",
                      "lambdarank_num_pair_per_sample": 16})
        else:
            p.update({"objective": "reg:squarederror"})
        return p

    def update(self, features, groups, latencies, retrain: bool | None = None) -> bool:
        """Add measured candidates: feature rows, their workload keys, latency in seconds or None (failed).

        Returns True when the model was retrained.
        """
        feats = _as_matrix(features)
        if len(feats) != len(groups) or len(feats) != len(latencies):
            raise CostModelError(f"update got {len(feats)} feature rows, {len(groups)} groups and "
                                 f"{len(latencies)} latencies; they must match")
        for row, g, lat in zip(feats, groups, latencies):
            self._x.append(row)
            self._groups.append(str(g))
            self._lat.append(math.inf if lat is None or not math.isfinite(lat) or lat <= 0 else float(lat))
        self._since_train += len(feats)
        if retrain is None:
            retrain = self._since_train >= self.retrain_every or (not self.is_trained and self._enough())
        if retrain and self._enough():
            self.train()
            return True
        return False

    def _enough(self) -> bool:
        return sum(1 for v in self._lat if math.isfinite(v)) >= self.min_train_samples

    def _labels(self, lat: np.ndarray, groups: np.ndarray) -> np.ndarray:
        y = np.zeros(len(lat))
        for g in np.unique(groups):
            m = groups == g
            best = lat[m].min()
            if math.isfinite(best):
                y[m] = np.where(np.isfinite(lat[m]), best / lat[m], 0.0)
        return y

    @staticmethod
    def _log_targets(y: np.ndarray, group_ids: np.ndarray) -> np.ndarray:
        """Regression targets: log of the normalized throughput; a failure one unit below its group's worst."""
        t = np.zeros(len(y))
        for g in np.unique(group_ids):
            m = group_ids == g
            ok = y[m] > 0
            floor = (np.log(y[m][ok]).min() if ok.any() else 0.0) - 1.0
            t[m] = np.where(ok, np.log(np.where(ok, y[m], 1.0)), floor)
        return t

    def _dmatrix(self, x, y, group_ids):
        import xgboost as xgb

        if self.objective == "rank":
            order = np.argsort(group_ids, kind="stable")
            return xgb.DMatrix(x[order], label=y[order], qid=group_ids[order]), order
        return xgb.DMatrix(x, label=self._log_targets(y, group_ids)), np.arange(len(y))

    def _folds(self, x: np.ndarray) -> np.ndarray:
        """The fold of each sample: random, but samples with identical feature rows always share one."""
        _, twin = np.unique(x, axis=0, return_inverse=True)
        twin = np.asarray(twin).reshape(-1)
        n_twins = int(twin.max()) + 1
        fold_of = np.empty(n_twins, dtype=np.int64)
        fold_of[self._rng.permutation(n_twins)] = np.arange(n_twins) % self.folds
        return fold_of[twin]

    def _fit(self, x, y, gid):
        import xgboost as xgb

        dtrain, _ = self._dmatrix(x, y, gid)
        return xgb.train(self._params(), dtrain, self.rounds, verbose_eval=False)

    def train(self) -> ModelMetrics:
        """Cross-validate (the metrics), then boost the serving model on all samples. Returns the metrics."""
        import xgboost as xgb

        x = np.ascontiguousarray(np.stack(self._x), dtype=np.float32)
        groups = np.asarray(self._groups)
        y = self._labels(np.asarray(self._lat), groups)
        _, gid = np.unique(groups, return_inverse=True)
        n = len(y)
        metrics = ModelMetrics(n_train=n, rounds=self.rounds, k=self.top_k)
        if n >= self.folds * self.MIN_PER_FOLD:
            fold = self._folds(x)
            good = total = good_ok = total_ok = 0
            recalls = []
            for f in range(self.folds):
                hold, fit = np.nonzero(fold == f)[0], np.nonzero(fold != f)[0]
                if len(hold) < 2 or not len(fit):
                    continue
                pred = self._fit(x[fit], y[fit], gid[fit]).predict(xgb.DMatrix(x[hold]))
                g, t = pair_counts(pred, y[hold], gid[hold])
                good, total = good + g, total + t
                g, t = pair_counts(pred, y[hold], gid[hold], only_positive=True)
                good_ok, total_ok = good_ok + g, total_ok + t
                r = top_k_recall(pred, y[hold], gid[hold], self.top_k)
                if not math.isnan(r):
                    recalls.append(r)
                metrics.n_heldout += len(hold)
            metrics.pairwise_accuracy = good / total if total else math.nan
            metrics.pairwise_accuracy_ok = good_ok / total_ok if total_ok else math.nan
            metrics.top_k_recall = float(np.mean(recalls)) if recalls else math.nan
        self._booster = self._fit(x, y, gid)
        self.metrics = metrics
        self.history.append(metrics.as_dict())
        self._since_train = 0
        log.info("cost model trained on %d samples (%d rounds): %d-fold held-out pairwise accuracy %.3f "
                 "(successful only %.3f), top-%d recall %.3f", n, self.rounds, self.folds,
                 metrics.pairwise_accuracy, metrics.pairwise_accuracy_ok, self.top_k, metrics.top_k_recall)
        return metrics

    def predict(self, features) -> np.ndarray:
        """Scores (higher is better) for feature rows; random scores while the model is untrained."""
        feats = _as_matrix(features)
        if self._booster is None:
            return self._rng.random(len(feats))
        import xgboost as xgb

        return np.asarray(self._booster.predict(xgb.DMatrix(feats)), dtype=np.float64)

    # ---------------------------------------------------------------------------------------------------
    def save(self, path: str | os.PathLike) -> None:
        """Write the booster as XGBoost JSON at ``path`` and the model's settings to ``path + '.meta.json'``."""
        path = os.fspath(path)
        if self._booster is None:
            raise CostModelError("cannot save an untrained cost model (it has no booster yet)")
        if not path.endswith(".json"):
            raise CostModelError(f"cost model path must end in .json (XGBoost's JSON format), got {path!r}")
        self._booster.save_model(path)
        meta = {"format": "tunefarm-xgb-cost-model", "feature_version": FEATURE_VERSION,
                "feature_len": FEATURE_LEN, "objective": self.objective, "metrics": self.metrics.as_dict()}
        with open(path + ".meta.json", "w") as f:
            json.dump(meta, f, indent=1)

    @classmethod
    def load(cls, path: str | os.PathLike, **kwargs) -> "XGBCostModel":
        """Load a model written by :meth:`save` (it predicts at once; new ``update`` calls retrain from scratch)."""
        import xgboost as xgb

        path = os.fspath(path)
        try:
            with open(path + ".meta.json") as f:
                meta = json.load(f)
        except FileNotFoundError:
            raise CostModelError(f"{path}.meta.json is missing: {path!r} was not written by XGBCostModel.save") \
                from None
        except ValueError as e:
            raise CostModelError(f"{path}.meta.json is not valid JSON: {e}") from None
        if meta.get("format") != "tunefarm-xgb-cost-model":
            raise CostModelError(f"{path}.meta.json is not a tunefarm cost model description")
        if meta.get("feature_version") != FEATURE_VERSION or meta.get("feature_len") != FEATURE_LEN:
            raise CostModelError(f"cost model {path!r} was trained on feature version {meta.get('feature_version')} "
                                 f"({meta.get('feature_len')} features); this tunefarm uses version "
                                 f"{FEATURE_VERSION} ({FEATURE_LEN} features)")
        model = cls(objective=meta.get("objective", "regression"), **kwargs)
        booster = xgb.Booster()
        try:
            booster.load_model(path)
        except xgb.core.XGBoostError as e:
            raise CostModelError(f"cannot load XGBoost model {path!r}: {e}") from None
        model._booster = booster
        model.metrics = ModelMetrics(**{k: v for k, v in meta.get("metrics", {}).items()
                                        if k in ModelMetrics.__dataclass_fields__})
        return model
