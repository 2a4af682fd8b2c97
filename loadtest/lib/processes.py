"""What the load scripts share: processes started and stopped as groups, loopback ports, GETs,
CPU and memory read from /proc."""

import os
import random
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
RELEASE = ROOT / "target" / "release"
STOP_TIMEOUT = 15
TICK = os.sysconf("SC_CLK_TCK")
# No proxy for loopback requests, whatever the environment says.
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class Failed(Exception):
    """The run cannot go on."""


class Processes:
    """Everything a script started, each in a process group of its own, to be ended."""

    def __init__(self):
        self.running = []

    def start(self, name, argv, logfile, stdout=None, env=None, cwd=None):
        """Starts `argv` with its output in `logfile` (its stdout in `stdout` when given)."""
        err = open(logfile, "wb")
        out = open(stdout, "wb") if stdout else err
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                    start_new_session=True, env=env, cwd=cwd)
        finally:
            err.close()
            out.close()
        proc.name, proc.logfile = name, logfile
        self.running.append(proc)
        return proc

    def stop(self, proc):
        """SIGTERM to its group, SIGKILL if it lingers; waits until it is gone."""
        if proc.poll() is None:
            self._signal(proc, signal.SIGTERM)
            try:
                proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                print(f"{proc.name} did not stop within {STOP_TIMEOUT}s: killing it",
                      file=sys.stderr)
        self._signal(proc, signal.SIGKILL)
        proc.wait()
        if proc in self.running:
            self.running.remove(proc)

    def stop_all(self):
        for proc in reversed(list(self.running)):
            self.stop(proc)

    @staticmethod
    def _signal(proc, sig):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def free_port():
    """A free port of 127.0.0.1, below the ephemeral range when there is room (a port of that
    range may be taken by one of the fleet's connections before a server binds it)."""
    try:
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 0
    below = random.sample(range(10000, low), 100) if low > 11000 else []
    for port in below + [0]:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return s.getsockname()[1]
    raise Failed("no free port on 127.0.0.1")


def log_tail(path, lines=15):
    try:
        return "\n".join(Path(path).read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def run(argv, what, timeout, env=None):
    result = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                            timeout=timeout, env=env)
    if result.returncode != 0:
        raise Failed(f"{what} failed ({result.returncode}):\n{result.stderr[-2000:]}")
    return result


def get_text(url, timeout=5):
    """(status, body text) of a GET; status None when there was no answer."""
    try:
        with OPENER.open(urllib.request.Request(url), timeout=timeout) as r:
            return r.status, r.read().decode(errors="replace")
    except urllib.error.HTTPError as e:
        return e.code, ""
    except OSError:
        return None, ""


def wait_until(what, proc, check, timeout=60):
    """Polls `check` until true; fails when `proc` exits first or the time is up."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise Failed(f"{proc.name} exited ({proc.returncode}) before {what}:\n"
                         f"{log_tail(proc.logfile)}")
        if check():
            return
        time.sleep(0.1)
    raise Failed(f"not {what} within {timeout}s" +
                 (f":\n{log_tail(proc.logfile)}" if proc is not None else ""))


def cpu_s(pids):
    """CPU seconds (user and system) these processes used so far; a gone one counts 0."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / TICK


def children_of(pid):
    """The pids whose parent is `pid` (a PostgreSQL server's backends and workers)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid == pid:
            found.append(int(entry.name))
    return found


def listener_pid(port):
    """The pid of the process listening on 127.0.0.1:`port` (from /proc, no `ss` needed)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            f = line.split()
            if f[3] == "0A" and int(f[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(f[9])
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            for fd in (entry / "fd").iterdir():
                link = os.readlink(fd)
                if link.startswith("socket:[") and link[8:-1] in inodes:
                    return int(entry.name)
        except OSError:
            continue
    return None


def metric_sum(text, name):
    """The sum of a Prometheus metric over its label sets in exposition `text`; None if absent."""
    total, seen = 0.0, False
    for line in text.splitlines():
        if line.startswith(name) and line[len(name):len(name) + 1] in ("{", " "):
            try:
                total += float(line.rsplit(" ", 1)[1])
                seen = True
            except ValueError:
                pass
    return total if seen else None
