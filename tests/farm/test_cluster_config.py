"""cluster.yaml is a configuration Ray's own cluster launcher accepts, with the measurement resource on every
node (and the commented cloud example is valid too)."""
from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
import yaml

CLUSTER_YAML = Path(__file__).resolve().parents[2] / "cluster.yaml"


def _load() -> dict:
    return yaml.safe_load(CLUSTER_YAML.read_text())


def _validate(config: dict) -> dict:
    util = pytest.importorskip("ray.autoscaler._private.util")
    prepared = util.prepare_config(config)
    util.validate_config(prepared)
    return prepared


def test_ray_accepts_the_on_premises_config():
    config = _load()
    assert config["provider"]["type"] == "local"
    prepared = _validate(config)
    node_type = prepared["available_node_types"][prepared["head_node_type"]]
    assert node_type["min_workers"] == node_type["max_workers"] == len(config["provider"]["worker_ips"])


def _resources_flag(command: str) -> dict:
    for token in shlex.split(command):
        if token.startswith("--resources="):
            return json.loads(token.split("=", 1)[1])
    return {}


def test_every_node_starts_with_the_measure_slot_resource():
    config = _load()
    for key in ("head_start_ray_commands", "worker_start_ray_commands"):
        commands = config[key]
        assert all(isinstance(c, str) for c in commands), f"{key}: an item parsed as a mapping (YAML ': ' pitfall)"
        starts = [c for c in commands if "ray start" in c]
        assert len(starts) == 1
        assert _resources_flag(starts[0]) == {"measure_slot": 1}


def test_token_authentication_is_on_everywhere():
    """Ray 2.60's token authentication: every node starts with it, shells on the nodes have it, and the token
    made by `ray get-auth-token --generate` here is copied to every node (where Ray reads it by default)."""
    config = _load()
    for key in ("head_start_ray_commands", "worker_start_ray_commands"):
        start = next(c for c in config[key] if "ray start" in c)
        assert start.index("export RAY_AUTH_MODE=token;") < start.index("ray start")
    assert any("export RAY_AUTH_MODE=token" in c and "~/.bashrc" in c for c in config["setup_commands"])
    assert config["file_mounts"]["~/.ray/auth_token"] == "~/.ray/auth_token"


def test_setup_installs_tunefarm():
    config = _load()
    installs = [c for c in config["setup_commands"] if "pip install" in c and "tunefarm" in c]
    assert installs and config["file_mounts"]["~/tunefarm"] == "."


def test_the_commented_cloud_example_is_valid_too():
    text = CLUSTER_YAML.read_text()
    block = re.search(r"# BEGIN CLOUD EXAMPLE\n(.*?)# END CLOUD EXAMPLE", text, re.S).group(1)
    cloud = yaml.safe_load("\n".join(line[2:] if line.startswith("# ") else line.lstrip("#")
                                     for line in block.splitlines()))
    config = {k: v for k, v in _load().items()
              if k not in ("provider", "auth", "min_workers", "max_workers")}
    config.update(cloud)
    prepared = _validate(config)
    assert prepared["available_node_types"]["measure"]["resources"] == {"measure_slot": 1}
