"""Test hosts on one machine: a network namespace per host, joined by veth pairs to a bridge in a namespace of
its own, so hosts talk over real TCP and nothing of theirs touches the machine's own network.

Every address (``SUBNET``) exists only inside these namespaces: the root namespace gets no interface, no route
and no bridge, and the bridge has no uplink, so nothing outside can be reached from a host nor a host from
outside. Each host also has its own host name (a UTS namespace: tunefarm stores the measuring host's name with
every record) and its own process tree (a PID namespace with its own /proc): a host's ``ps`` sees only its own
processes, as on a real machine. That matters to Ray: a driver finds "its" node among the raylets that ``ps``
shows, and on a shared process tree it would take the head's node for its own. A host's first process (its
``init``, which reaps orphans) holds these namespaces; every later command enters them (``nsenter``).

Needs root and iproute2 (``ip``) plus util-linux (``unshare``, ``nsenter``). Everything is removed by ``close()`` (also run
``atexit``), and namespaces left behind by a test process that was killed are swept when the next one starts:
their names carry the pid that made them.
"""
from __future__ import annotations

import atexit
import os
import re
import shutil
import signal
import subprocess
import sys
import time

SUBNET = "10.213.0"      # /24 used only on the namespaces' bridge
PREFIX = "tfmh"          # namespace names: tfmh<pid>-<host>; nothing else on a machine is named like this
_STALE = re.compile(rf"^{PREFIX}(\d+)-")
# a host's init: names the host, then reaps whatever is orphaned on it (Ray daemons outlive `ray start`)
_INIT = ("import os, socket, sys, time\nsocket.sethostname(sys.argv[1])\nwhile True:\n    try:\n"
         "        os.wait()\n    except ChildProcessError:\n        time.sleep(1)")


class NetnsError(RuntimeError):
    """The machine cannot host namespaced test hosts (not root, no iproute2), or a command failed."""


def ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    """Run ``ip ARGS``; a failure raises NetnsError with ip's own message."""
    p = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if check and p.returncode != 0:
        raise NetnsError(f"ip {' '.join(args)}: {p.stderr.strip() or p.returncode}")
    return p


def check_capable() -> None:
    """Raise NetnsError saying what is missing unless this process can make namespaces, veths and bridges."""
    missing = [tool for tool in ("ip", "unshare", "nsenter") if shutil.which(tool) is None]
    if missing:
        raise NetnsError(f"namespaced test hosts need {' and '.join(missing)} (iproute2, util-linux)")
    if os.geteuid() != 0:
        raise NetnsError("namespaced test hosts need root (ip netns add)")


def namespace_pids(ns: str) -> list[int]:
    """Processes whose network namespace is ``ns`` (``ip netns pids``)."""
    out = ip("netns", "pids", ns, check=False).stdout
    return [int(x) for x in out.split()]


def kill_namespace(ns: str, wait_s: float = 10.0) -> None:
    """SIGKILL every process in ``ns`` until none is left (processes that fork meanwhile are caught too)."""
    deadline = time.monotonic() + wait_s
    while True:
        pids = namespace_pids(ns)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if time.monotonic() > deadline:
            raise NetnsError(f"processes of namespace {ns} survive SIGKILL: {pids}")
        time.sleep(0.1)


def sweep_stale() -> list[str]:
    """Remove namespaces of test hosts whose creating process is gone (a test killed before its cleanup)."""
    removed = []
    for line in ip("netns", "list", check=False).stdout.splitlines():
        name = line.split()[0] if line.strip() else ""
        m = _STALE.match(name)
        if m is None or _alive(int(m.group(1))):
            continue
        kill_namespace(name)
        ip("netns", "del", name, check=False)
        removed.append(name)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class HostNetwork:
    """A bridge and the hosts plugged into it: ``add(name)`` gives a host its namespace and address.

    ``cut(name)`` / ``restore(name)`` take the host's link down and up on the bridge side (the host sees its
    interface still up: packets just stop, as when a switch port or a cable fails); ``kill(name)`` SIGKILLs
    every process of the host; ``exec_argv(name, argv)`` is the command line that runs ``argv`` on the host.
    """

    def __init__(self):
        check_capable()
        sweep_stale()
        self.prefix = f"{PREFIX}{os.getpid()}"
        self.bridge_ns = f"{self.prefix}-net"
        self.hosts: dict[str, str] = {}          # host name -> its address
        self._init: dict[str, int] = {}          # host name -> pid of its init (as this namespace sees it)
        self._launchers: list[subprocess.Popen] = []  # `ip netns exec ... unshare` parents of the inits
        self._made = 0                           # hosts made so far: each gets the next address
        self._closed = False
        atexit.register(self.close)
        try:
            ip("netns", "add", self.bridge_ns)
            ip("-n", self.bridge_ns, "link", "set", "lo", "up")
            ip("-n", self.bridge_ns, "link", "add", "br0", "type", "bridge")
            ip("-n", self.bridge_ns, "link", "set", "br0", "up")
        except BaseException:
            self.close()
            raise

    def namespace(self, name: str) -> str:
        return f"{self.prefix}-{name}"

    def add(self, name: str) -> str:
        """A new host ``name`` on the bridge; returns its address."""
        if name in self.hosts or not re.fullmatch(r"[a-z][a-z0-9]{0,5}", name):
            raise NetnsError(f"bad or duplicate host name {name!r} (1-6 lowercase letters and digits)")
        addr = f"{SUBNET}.{10 + self._made}"  # a host made again (a replacement) gets a new address
        ns = self.namespace(name)
        ip("netns", "add", ns)
        self._made += 1
        self.hosts[name] = addr
        ip("-n", ns, "link", "set", "lo", "up")
        # both ends are created inside their namespaces: the link never exists in the root namespace
        ip("link", "add", "eth0", "netns", ns, "type", "veth", "peer", "name", self._port(name),
           "netns", self.bridge_ns)
        ip("-n", ns, "addr", "add", f"{addr}/24", "dev", "eth0")
        ip("-n", ns, "link", "set", "eth0", "up")
        ip("-n", self.bridge_ns, "link", "set", self._port(name), "master", "br0")
        ip("-n", self.bridge_ns, "link", "set", self._port(name), "up")
        self._init[name] = self._start_init(name, ns)
        return addr

    def _start_init(self, name: str, ns: str, timeout_s: float = 30.0) -> int:
        """Start host ``name``'s init in fresh UTS, mount and PID namespaces; its pid once it named the host."""
        launcher = subprocess.Popen(["ip", "netns", "exec", ns, "unshare", "--uts", "--mount", "--pid", "--fork",
                                     "--mount-proc", "--", sys.executable, "-c", _INIT, name],
                                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self._launchers.append(launcher)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                children = open(f"/proc/{launcher.pid}/task/{launcher.pid}/children").read().split()
            except FileNotFoundError:
                children = []
            if children:
                probe = subprocess.run(["nsenter", "-t", children[0], "-u", "hostname"], capture_output=True,
                                       text=True, timeout=10)
                if probe.stdout.strip() == name:
                    return int(children[0])
            time.sleep(0.05)
        raise NetnsError(f"host {name}'s init did not start in {timeout_s:.0f} s")

    def _port(self, name: str) -> str:
        return f"p-{name}"  # the bridge's side of a host's link (in the bridge's namespace)

    def exec_argv(self, name: str, argv: list[str]) -> list[str]:
        """``argv`` run on host ``name``: in its network, UTS, mount and PID namespaces (those of its init).

        A host that was killed has no init: NetnsError, never a stranger's namespaces behind a reused pid."""
        pid = self._init[name]
        try:
            ours = os.stat(f"/proc/{pid}/ns/net").st_ino == os.stat(f"/run/netns/{self.namespace(name)}").st_ino
        except FileNotFoundError:
            ours = False
        if not ours:
            raise NetnsError(f"host {name} is down (its processes were killed)")
        return ["nsenter", "-t", str(pid), "-n", "-u", "-m", "-p", "--", *argv]

    def cut(self, name: str) -> None:
        ip("-n", self.bridge_ns, "link", "set", self._port(name), "down")

    def restore(self, name: str) -> None:
        ip("-n", self.bridge_ns, "link", "set", self._port(name), "up")

    def kill(self, name: str) -> None:
        kill_namespace(self.namespace(name))

    def pids(self, name: str) -> list[int]:
        return namespace_pids(self.namespace(name))

    def remove(self, name: str) -> None:
        """Host ``name`` is gone for good: its processes killed, its namespace and link removed."""
        self.kill(name)
        # the link goes first, by its bridge side: a deleted namespace is torn down by the kernel later (its
        # veth with it), and a host of the same name added meanwhile would find its bridge port still taken
        ip("-n", self.bridge_ns, "link", "del", self._port(name), check=False)
        ip("netns", "del", self.namespace(name))
        del self.hosts[name], self._init[name]

    def close(self) -> None:
        """Kill every host's processes, then remove the hosts' namespaces (with their links) and the bridge's."""
        if self._closed:
            return
        self._closed = True
        errors = []
        for ns in [self.namespace(n) for n in self.hosts] + [self.bridge_ns]:  # removed hosts are gone already
            try:
                kill_namespace(ns)
            except NetnsError as e:
                errors.append(str(e))
            ip("netns", "del", ns, check=False)
        for launcher in self._launchers:  # they died with their namespaces: reap them
            launcher.wait(timeout=10)
        atexit.unregister(self.close)
        if errors:
            raise NetnsError("; ".join(errors))

    def __enter__(self) -> "HostNetwork":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
