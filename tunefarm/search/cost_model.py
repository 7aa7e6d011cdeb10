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

Training is ``model_training.fit``, a pure function of the packed samples (``training_payload``): a tuning job
runs it on a farm worker and ``install``s the result, so the search never waits for XGBoost and always scores
with the newest finished model (``version`` counts them). ``train`` runs it in this process.

``CostModel`` is what the search and the tuning job use of a model; ``create("xgb")`` makes this one.
"""
from __future__ import annotations

import abc
import base64
import json
import logging
import math
import os
import uuid

import numpy as np

from .features import FEATURE_LEN, FEATURE_VERSION
from .model_training import ModelMetrics, fit, pair_counts, pairwise_accuracy, top_k_recall

log = logging.getLogger("tunefarm.search.cost_model")

__all__ = ["CostModel", "XGBCostModel", "CostModelError", "ModelMetrics", "create", "pair_counts",
           "pairwise_accuracy", "top_k_recall"]

RETRAIN_EVERY = 16  # new samples between trainings
FOLDS = 5           # the k of the cross-validated quality metrics
TOP_K = 8           # the k of the top-k recall metric


class CostModelError(Exception):
    """A cost model file that cannot be loaded, or inputs of the wrong shape."""


def _as_matrix(features) -> np.ndarray:
    """Feature rows as the C-contiguous float32 matrix XGBoost copies fastest into a DMatrix."""
    x = np.asarray(features, dtype=np.float32) if len(features) else np.zeros((0, FEATURE_LEN), np.float32)
    if x.size % FEATURE_LEN:
        raise CostModelError(f"feature rows must have {FEATURE_LEN} columns (feature version {FEATURE_VERSION}), "
                             f"got an array of shape {x.shape}")
    return np.ascontiguousarray(x.reshape(-1, FEATURE_LEN))


class CostModel(abc.ABC):
    """What the search (``strategy.py``) and the tuning job use of a cost model.

    The job ``add``s every measurement and, when the model ``wants_training``, sends ``training_payload()`` to a
    worker (``tuning/handlers.py:train``) and ``install``s what comes back; ``version`` counts the models
    installed. The search scores candidates with ``predict`` once ``is_trained``; a model that
    ``predicts_log_throughput`` gives scores on the scale of ``log(best latency / latency)``, so measured and
    predicted programs can be ranked together.
    """

    version: int

    @property
    @abc.abstractmethod
    def is_trained(self) -> bool:
        """Whether ``predict`` means something yet (before that its scores are random)."""

    @property
    @abc.abstractmethod
    def predicts_log_throughput(self) -> bool:
        """Scores are ``log(best latency / latency)``, comparable to measurements."""

    @abc.abstractmethod
    def add(self, features, groups, latencies) -> None:
        """Measured candidates: feature rows, their workload keys, latency in seconds or None (failed)."""

    @abc.abstractmethod
    def predict(self, features) -> np.ndarray:
        """Scores (higher is better) for feature rows."""

    @abc.abstractmethod
    def wants_training(self) -> bool:
        """Enough new samples since the last training."""

    @abc.abstractmethod
    def training_payload(self, since: int = 0) -> dict:
        """The samples from number ``since`` on (a worker holds the earlier ones) and the settings, as plain data
        for a worker to train on."""

    @abc.abstractmethod
    def install(self, result: dict):
        """Serve the model a worker trained; the scores of earlier versions are stale from now on."""


class XGBCostModel(CostModel):
    """Learned ranking of schedules (see module doc). ``update`` adds measurements, ``predict`` scores.

    ``min_train_samples``: successful measurements before the first model; ``rounds``: boosting rounds of every
    model.
    """

    def __init__(self, objective: str = "regression", seed: int = 0, min_train_samples: int = 16,
                 rounds: int = 60):
        if objective not in ("rank", "regression"):
            raise ValueError(f"objective must be 'rank' or 'regression', got {objective!r}")
        if rounds < 1:
            raise ValueError(f"rounds must be at least 1, got {rounds!r}")
        self.objective = objective
        self.seed = seed
        self.min_train_samples = min_train_samples
        self.rounds = rounds
        self._rng = np.random.default_rng(seed)
        self._x: list[np.ndarray] = []
        self._group_index: dict[str, int] = {}  # workload key -> its id in payloads (order of first appearance)
        self._group_ids: list[int] = []
        self.uid = uuid.uuid4().hex            # names this model's samples on the workers that keep them
        self._lat: list[float] = []  # seconds; inf for failures
        self._successes = 0
        self._trained_on = 0         # samples the installed model (or the one being trained) saw
        self._booster = None
        self.version = 0             # models installed so far
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

    @property
    def new_samples(self) -> int:
        """Samples added since the data of the last training was packed."""
        return len(self._x) - self._trained_on

    def add(self, features, groups, latencies) -> None:
        """Add measured candidates: feature rows, their workload keys, latency in seconds or None (failed)."""
        feats = _as_matrix(features)
        if len(feats) != len(groups) or len(feats) != len(latencies):
            raise CostModelError(f"update got {len(feats)} feature rows, {len(groups)} groups and "
                                 f"{len(latencies)} latencies; they must match")
        for row, g, lat in zip(feats, groups, latencies):
            self._x.append(row)
            self._group_ids.append(self._group_index.setdefault(str(g), len(self._group_index)))
            self._lat.append(math.inf if lat is None or not math.isfinite(lat) or lat <= 0 else float(lat))
            self._successes += math.isfinite(self._lat[-1])

    def update(self, features, groups, latencies, retrain: bool | None = None) -> bool:
        """``add``, then train here when ``retrain`` (default: ``wants_training``). True when it trained."""
        self.add(features, groups, latencies)
        if retrain is None:
            retrain = self.wants_training()
        if retrain and self.enough():
            self.train()
            return True
        return False

    def enough(self) -> bool:
        """At least ``min_train_samples`` successful measurements."""
        return self._successes >= self.min_train_samples

    def wants_training(self) -> bool:
        """Enough new samples since the last training (or the first model can be trained)."""
        if not self.enough():
            return False
        return self.new_samples >= RETRAIN_EVERY or (not self.is_trained and self.new_samples > 0)

    def training_payload(self, since: int = 0) -> dict:
        """The samples from number ``since`` on and the settings, as plain data for ``model_training.fit`` (on a
        worker or here). ``since`` > 0 sends only what was added after an earlier payload of this model (named by
        ``samples``, its ``uid``): a worker that kept the earlier ones adds these (``model_training.TrainingSets``),
        so a retraining does not send every sample again."""
        if not 0 <= since <= len(self._x):
            raise CostModelError(f"since must be in [0, {len(self._x)}], got {since!r}")
        rows = self._x[since:]
        x = (np.ascontiguousarray(np.stack(rows), dtype=np.float32) if rows
             else np.zeros((0, FEATURE_LEN), dtype=np.float32))
        self._trained_on = len(self._x)
        return {"samples": self.uid, "since": since, "n": len(x), "x": base64.b64encode(x.tobytes()).decode("ascii"),
                "groups": self._group_ids[since:],
                "latencies": [v if math.isfinite(v) else None for v in self._lat[since:]],
                "settings": {"objective": self.objective, "seed": self.seed, "nthread": 1, "rounds": self.rounds,
                             "folds": FOLDS, "top_k": TOP_K,
                             "fold_seed": int(self._rng.integers(1 << 31))}}

    def install(self, result: dict) -> ModelMetrics:
        """Serve the model ``fit`` returned; the scores of earlier versions are stale from now on."""
        import xgboost as xgb

        # One thread, also while loading: load_model parallelizes over XGBoost's global thread count, and its
        # OpenMP team then spins for milliseconds after every load (15% of the driver's CPU per trial).
        with xgb.config_context(nthread=1):
            booster = xgb.Booster()
            booster.load_model(bytearray(base64.b64decode(result["model"])))
        booster.set_param({"nthread": 1})  # predicting a few hundred rows: a thread team only spins
        self._booster = booster
        self.metrics = ModelMetrics(**result["metrics"])
        self.history.append(self.metrics.as_dict())
        self.version += 1
        m = self.metrics
        log.info("cost model v%d trained on %d samples (%d rounds): %d-fold held-out pairwise accuracy %.3f "
                 "(successful only %.3f), top-%d recall %.3f", self.version, m.n_train, self.rounds, FOLDS,
                 m.pairwise_accuracy, m.pairwise_accuracy_ok, TOP_K, m.top_k_recall)
        return self.metrics

    def train(self) -> ModelMetrics:
        """Train on every sample in this process and serve the result. Returns its metrics."""
        return self.install(fit(self.training_payload()))

    def predict(self, features) -> np.ndarray:
        """Scores (higher is better) for feature rows; random scores while the model is untrained."""
        feats = _as_matrix(features)
        if self._booster is None:
            return self._rng.random(len(feats))
        return np.asarray(self._booster.inplace_predict(feats), dtype=np.float64)

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


def create(kind: str = "xgb", **options) -> CostModel:
    """The cost model named ``kind``: ``"xgb"`` (``XGBCostModel``; ``options``: ``seed``, ``objective``, ...)."""
    if kind != "xgb":
        raise ValueError(f"unknown cost model {kind!r}; use 'xgb'")
    return XGBCostModel(**options)
