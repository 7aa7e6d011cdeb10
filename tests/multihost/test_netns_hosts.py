"""The namespaced test hosts themselves (tunefarm/testing/netns.py): real TCP between hosts, addresses that
exist only inside the namespaces, a link that can be cut and restored, a host whose processes all die, and a
teardown that leaves nothing behind. Marked ``multihost`` (root and iproute2); CI runs it in its own step."""
from __future__ import annotations

import subprocess
import sys
import time

import pytest

from tunefarm.testing.netns import SUBNET, HostNetwork, NetnsError, ip, namespace_pids

pytestmark = [pytest.mark.multihost, pytest.mark.timeout(300)]

SERVER = "import socket\ns = socket.create_server(('0.0.0.0', 7000))\nwhile True:\n" \
         "    c, _ = s.accept(); c.sendall(socket.gethostname().encode()); c.close()"
PROCS = "import os\nprint(*sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))"
CLIENT = "import socket, sys\nc = socket.create_connection((sys.argv[1], 7000), timeout=3)\n" \
         "print(c.recv(100).decode())"


def _ask(net: HostNetwork, host: str, addr: str) -> subprocess.CompletedProcess:
    return subprocess.run(net.exec_argv(host, [sys.executable, "-c", CLIENT, addr]), capture_output=True,
                          text=True, timeout=30)


def _serve(net: HostNetwork, host: str) -> subprocess.Popen:
    p = subprocess.Popen(net.exec_argv(host, [sys.executable, "-c", SERVER]), stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    time.sleep(1.0)  # the server binds
    return p


def test_hosts_talk_tcp_only_among_themselves_and_leave_nothing_behind():
    net = HostNetwork()
    server = None
    try:
        a, b = net.add("a"), net.add("b")
        with pytest.raises(NetnsError, match="bad or duplicate host name"):
            net.add("a")
        server = _serve(net, "b")
        reply = _ask(net, "a", b)
        assert reply.returncode == 0 and reply.stdout.strip() == "b", reply.stderr  # b answers as host "b"
        procs = subprocess.run(net.exec_argv("a", [sys.executable, "-c", PROCS]), capture_output=True, text=True,
                               timeout=30).stdout.split()
        assert procs[0] == "1" and len(procs) <= 3, procs  # a's init, this python (and nsenter's fork at most)
        root = ip("-4", "addr").stdout + ip("route").stdout
        assert SUBNET not in root  # the root namespace has no address or route of the test network
        assert _ask(net, "a", "127.0.0.1").returncode != 0  # a's loopback is a's own: nothing listens there
        net.cut("b")
        cut = _ask(net, "a", b)
        assert cut.returncode != 0 and "timed out" in cut.stderr
        assert namespace_pids(net.namespace("b"))  # a cut host's processes live on
        net.restore("b")
        assert _ask(net, "a", b).stdout.strip() == "b"
        net.kill("b")
        assert server.wait(timeout=10) == -9 and not net.pids("b")
        assert _ask(net, "a", a).returncode != 0  # nobody serves on a either
        with pytest.raises(NetnsError, match="host b is down"):
            net.exec_argv("b", ["true"])
    finally:
        namespaces = [net.namespace(h) for h in net.hosts] + [net.bridge_ns]
        net.close()
        if server is not None and server.poll() is None:
            server.kill()
    left = ip("netns", "list").stdout
    assert not any(ns in left for ns in namespaces)


def test_a_host_network_left_by_a_killed_process_is_swept_by_the_next():
    code = ("from tunefarm.testing.netns import HostNetwork\nimport os, sys\nn = HostNetwork()\nn.add('x')\n"
            "print(n.namespace('x'), flush=True)\nos.kill(os.getpid(), 9)")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    ns = p.stdout.strip()
    assert p.returncode == -9 and ns and ns in ip("netns", "list").stdout  # atexit never ran: it is left
    with HostNetwork():
        assert ns not in ip("netns", "list").stdout
