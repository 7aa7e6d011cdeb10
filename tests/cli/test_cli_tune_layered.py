"""``tunefarm tune --db mine --db team``: the job writes only to the first database, and the team's records count
as measured (their programs are not measured again; the budget counts them, as on ``--resume``)."""
from __future__ import annotations

from tunefarm.cli import main
from tunefarm.database import open_database

JOB = ["tune", "matmul-16", "--farm", "local", "--workers", "1", "--confirm", "0"]


def _hashes(path) -> set[str]:
    with open_database(str(path), readonly=True) as db:
        return set(db.records()["program_hash"])


def test_tune_into_the_first_of_two_databases(tmp_path, capsys):
    team, mine = tmp_path / "team.sqlite", tmp_path / "mine.sqlite"
    assert main(JOB + ["--trials", "6", "--seed", "1", "--db", str(team)]) == 0
    team_hashes = _hashes(team)
    assert len(team_hashes) == 6
    # without --resume the team's trials are refused as a database's own would be
    assert main(JOB + ["--trials", "10", "--db", str(mine), "--db", str(team)]) == 2
    assert "--resume" in capsys.readouterr().err
    assert main(JOB + ["--trials", "10", "--seed", "2", "--resume", "--db", str(mine), "--db", str(team)]) == 0
    mine_hashes = _hashes(mine)
    assert len(mine_hashes) == 4 and not mine_hashes & team_hashes  # 10 in all; nothing measured twice
    assert _hashes(team) == team_hashes  # the team's database is only read
