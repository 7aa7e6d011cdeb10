"""A tuning job sends a retraining only the samples its workers lack: a worker keeps the samples of the model's
earlier payloads (``model_training.TrainingSets``). When the training runs on a worker that started since (a
replaced one), the worker says so and the job sends every sample; every model is still installed."""
from __future__ import annotations

import tunefarm
from tunefarm.database import Database
from tunefarm.farm import LocalFarm
from tunefarm.tuning.job import TRAIN_HANDLER


class TrainingLog(LocalFarm):
    """A LocalFarm that notes the training items put on it and their answers."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.sent: list[tuple] = []      # (since, rows sent)
        self.answers: list[dict] = []

    def put(self, work):
        if work.handler == TRAIN_HANDLER:
            self.sent.append((work.payload["since"], work.payload["n"]))
        return super().put(work)

    def poll(self, timeout_s=None):
        out = super().poll(timeout_s)
        self.answers += [d.value for d in out if d.work.handler == TRAIN_HANDLER]
        return out


def _tune(tmp_path, farm, target, mm64) -> None:
    path = str(tmp_path / "t.sqlite")
    r = tunefarm.tune(mm64, target=target, max_trials=96, trials_per_round=96, database=path, farm=farm, seed=2,
                      progress=False)
    assert r.trials == 96 == len(Database(path).records())


def test_a_retraining_sends_only_the_new_samples(tmp_path, target, mm64):
    with TrainingLog(num_workers=2, target=target) as farm:
        _tune(tmp_path, farm, target, mm64)
    assert len(farm.sent) >= 3 and farm.sent[0][0] == 0
    incremental = [(since, n) for since, n in farm.sent if since]
    assert incremental, farm.sent  # most retrainings found their samples on the worker
    trained = [a["n"] for a in farm.answers if "n" in a]
    assert len(trained) == len(farm.answers) - sum("missing" in a for a in farm.answers) >= 3
    assert trained == sorted(trained)  # every model saw every sample sent so far
    assert sum(n for _, n in farm.sent) < sum(trained)  # fewer rows crossed the wire than the models saw
    for (since, n), answer in zip(farm.sent, farm.answers):
        if "n" in answer:
            assert answer["n"] == since + n


def test_a_training_on_a_worker_started_since_is_sent_every_sample(tmp_path, target, mm64):
    with TrainingLog(num_workers=2, target=target, max_compiles=12) as farm:  # workers are replaced mid-job
        _tune(tmp_path, farm, target, mm64)
    missing = [i for i, a in enumerate(farm.answers) if "missing" in a]
    assert missing, (farm.sent, farm.answers)
    for i in missing:  # the next training sends everything again, and it trains
        assert farm.sent[i][0] > 0
        if i + 1 == len(farm.sent):
            continue  # it answered as the job ended: a draining job trains no more (TuningJob._trained)
        assert farm.sent[i + 1][0] == 0
        assert "n" in farm.answers[i + 1] and farm.answers[i + 1]["n"] == farm.sent[i + 1][1]
