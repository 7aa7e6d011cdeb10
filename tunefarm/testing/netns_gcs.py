"""``python -m tunefarm.testing.netns_gcs ADDRESS``: print the cluster's nodes as JSON, asked of the GCS directly.

Run on a namespaced test host (netns_cluster.py) with the cluster's token in the environment: a GCS client
needs no driver, so asking takes a fraction of a second instead of the seconds ``ray.init`` takes.
"""
from __future__ import annotations

import json
import sys


def nodes(address: str) -> list[dict]:
    """``{node_id, ip, alive, draining, resources}`` of every node the GCS knows, dead ones included."""
    import ray._raylet
    from ray.core.generated import gcs_pb2

    client = ray._raylet.GcsClient(address=address)
    out = []
    for node_id, info in client.get_all_node_info(timeout=10).items():
        out.append({"node_id": node_id.hex(), "ip": info.node_manager_address,
                    "alive": info.state == gcs_pb2.GcsNodeInfo.GcsNodeState.ALIVE,
                    "draining": info.state_snapshot.state == gcs_pb2.NodeSnapshot.State.DRAINING,
                    "resources": dict(info.resources_total)})
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m tunefarm.testing.netns_gcs HOST:PORT", file=sys.stderr)
        return 2
    print(json.dumps(nodes(argv[0])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
