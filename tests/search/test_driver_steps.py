"""The driver's database steps: a step that claims programs also claims the next ones of each worker, as many as
it holds (4 on a LocalFarm), so a job needs a transaction for several trials, and it still stores every
measurement exactly once."""
from __future__ import annotations

import tunefarm
from tunefarm.database import Database


class CountingDatabase(Database):
    """The SQLite database, counting the driver's steps that claim programs."""

    claiming = 0

    def commit_and_claim(self, records, job_id, wanted):
        wanted = list(wanted)
        self.claiming += any(hashes for _, _, hashes, _ in wanted)
        return super().commit_and_claim(records, job_id, wanted)


def test_a_claim_serves_the_next_step_and_every_result_is_stored_once(tmp_path, farm, target, mm64):
    path = str(tmp_path / "d.sqlite")
    db = CountingDatabase(path)
    r = tunefarm.tune(mm64, target=target, max_trials=32, trials_per_round=8, database=db, farm=farm, seed=3,
                      progress=False)
    df = Database(path).records()
    assert r.trials == 32 == len(df) == df.program_hash.nunique()
    assert set(Database(path).jobs().status) == {"finished"}
    assert 0 < db.claiming <= 32 // 4  # one step per trial claimed 32 times; one more pick per worker, about 16
