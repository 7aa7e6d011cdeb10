"""``tunefarm.farm.create``: a farm from its name; bad names and arguments refused before anything starts, by
``create`` and by the farm the command line starts on first use (``farm_on_demand``)."""
from __future__ import annotations

import pytest

from farm_programs import candidate, matmul_func
from tunefarm.farm import LocalFarm, MeasureStatus, check_arguments, create
from tunefarm.target import Target
from tunefarm.tuning.farm_on_demand import farm_on_demand
from tunefarm.testing import batch


def test_a_local_farm_by_name_measures(tmp_path):
    with create("local", num_workers=1, target=Target.host(1), lock_path=str(tmp_path / "lock")) as farm:
        assert isinstance(farm, LocalFarm) and farm.num_workers == 1 and farm.target == Target.host(1)
        (result,) = batch.measure(farm, [candidate(matmul_func(16))])
    assert result.status is MeasureStatus.OK, result.error


@pytest.mark.parametrize("kind,options,match", [
    ("gpu", {}, "unknown farm 'gpu'"),
    ("local", {"num_workers": 0}, "workers must be a positive integer, got 0"),
    ("ray", {"num_workers": True}, "workers must be a positive integer, got True"),
    ("local", {"address": "auto"}, "a Ray address needs the 'ray' farm"),
])
def test_bad_names_and_arguments_are_refused_before_anything_starts(kind, options, match):
    with pytest.raises(ValueError, match=match):
        check_arguments(kind, options.get("num_workers"), options.get("address"))
    with pytest.raises(ValueError, match=match):
        create(kind, **options)
    with pytest.raises(ValueError, match=match):
        farm_on_demand(kind, None, options.get("num_workers"), options.get("address"))


def test_a_farm_on_demand_knows_its_target_and_starts_on_first_use(tmp_path):
    farm = farm_on_demand("local", "llvm -num-cores=1", workers=1)
    try:
        assert farm.target == Target("llvm -num-cores=1") and not farm.started  # answered without starting
        (result,) = batch.measure(farm, [candidate(matmul_func(8))])
        assert farm.started and isinstance(farm.start(), LocalFarm) and result.status is MeasureStatus.OK
    finally:
        farm.close()
