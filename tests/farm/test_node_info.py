"""What a node reports: host name and CPU target, and which job targets it can measure."""
from __future__ import annotations

import socket

from host_targets import not_this_host
from tunefarm.farm.node_info import NodeInfo, local_node_info
from tunefarm.target import Target


def test_local_report_is_the_host_target():
    info = local_node_info("n1", 4.0, "10.0.0.1")
    host = Target.host()
    assert info.hostname == socket.gethostname()
    assert Target(info.target) == host
    assert info.cpu == host.cpu and info.features == host.features
    assert info.num_cpus == 4.0
    assert NodeInfo.from_dict(info.to_dict()) == info


def test_matching_compares_cpu_and_features_not_core_count():
    info = local_node_info()
    host = Target.host()
    assert info.matches(host) and info.matches(host.with_num_cores(2))
    assert not info.matches(Target(not_this_host()))
    assert host.features, "the host reports its CPU features"
    without_one = Target(f"llvm -mattr=-{host.features[-1][1:]}")  # same CPU, one feature disabled
    assert not info.matches(without_one)
