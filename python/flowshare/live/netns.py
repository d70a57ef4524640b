"""Network namespaces for live runs: made by the run, used only by it, removed on every exit.

A live run places its senders in one namespace and its receivers in another, joined only
through the link emulator's TUN devices, so its traffic cannot reach any other interface of
the machine. The namespaces are named ``fsl-<pid>-<tag>-a`` and ``-b``: the process id lets a
later run remove the namespaces of a run that was killed outright (SIGKILL leaves no chance to
clean up), and nothing else on the machine is ever touched.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["LiveError", "Namespaces", "check_privileges", "describe_process", "namespaces", "remove_stale"]

PREFIX = "fsl-"
NETNS_DIR = Path("/var/run/netns")
TUN_DEVICE = Path("/dev/net/tun")
#: How long a child process is given to exit after SIGTERM before it is killed.
TERM_GRACE_S = 2.0
#: How long a killed child may take to go. One that outlives this is blocked in the kernel,
#: where no signal reaches it; the run then says so rather than waiting for ever.
KILL_WAIT_S = 10.0


class LiveError(RuntimeError):
    """A live run that cannot be set up or did not complete: one line saying why."""


def check_privileges() -> None:
    """Raise :class:`LiveError` unless this process can make namespaces and TUN devices."""
    if os.name != "posix" or not Path("/proc/self/ns/net").exists():
        raise LiveError("live mode needs Linux network namespaces, which this system lacks")
    if os.geteuid() != 0:
        raise LiveError(
            "live mode needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN) to make network "
            "namespaces; run it as root"
        )
    if shutil.which("ip") is None:
        raise LiveError("live mode needs the 'ip' command of iproute2 to make namespaces")
    if not TUN_DEVICE.exists():
        raise LiveError(f"live mode needs the TUN device {TUN_DEVICE}, which does not exist")


def _ip(*args: str) -> None:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        message = (done.stderr or done.stdout).strip().splitlines()
        raise LiveError(f"ip {' '.join(args)}: {message[-1] if message else 'failed'}")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def describe_process(pid: int) -> str:
    """Where process ``pid`` is: each of its threads' state and, when the kernel shows it, the
    kernel function it is waiting in (for an error about a process that does not end)."""
    tasks = Path(f"/proc/{pid}/task")
    try:
        tids = sorted(tasks.iterdir(), key=lambda t: int(t.name))
    except OSError:
        return f"process {pid} is gone"
    threads = []
    for task in tids:
        try:
            stat = (task / "stat").read_text()
        except OSError:
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        state = stat[stat.rindex(")") + 2 :].split(" ", 1)[0]
        where = ""
        with contextlib.suppress(OSError, IndexError):
            frame = (task / "stack").read_text().splitlines()[0]
            where = " in " + frame.split("] ", 1)[1].split("+", 1)[0]
        threads.append(f"thread {task.name} ({name}) {state}{where}")
    return "; ".join(threads) if threads else f"process {pid} has no threads left"


def remove_stale() -> list[str]:
    """Delete the namespaces of live runs whose process is gone; return their names."""
    if not NETNS_DIR.is_dir():
        return []
    removed = []
    for entry in sorted(NETNS_DIR.iterdir()):
        name = entry.name
        if not name.startswith(PREFIX):
            continue
        pid_text = name[len(PREFIX) :].split("-", 1)[0]
        if not pid_text.isdigit() or _pid_alive(int(pid_text)):
            continue
        with contextlib.suppress(LiveError):
            _ip("netns", "delete", name)
            removed.append(name)
    return removed


@dataclass
class Namespaces:
    """The two namespaces of a run and the processes started in them."""

    sender: str
    receiver: str
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def exec_argv(self, namespace: str, argv: Sequence[str]) -> list[str]:
        """``argv`` run inside ``namespace``."""
        return ["ip", "netns", "exec", namespace, *argv]

    def start(
        self, argv: Sequence[str], *, namespace: str | None = None, **popen: object
    ) -> subprocess.Popen[bytes]:
        """Start ``argv`` (inside ``namespace`` if given); it is stopped when the run ends."""
        full = self.exec_argv(namespace, argv) if namespace else list(argv)
        # Its own process group: a Ctrl-C at the terminal reaches the run, which then stops
        # its children in order, rather than every child at once.
        process = subprocess.Popen(full, start_new_session=True, **popen)  # type: ignore[call-overload]
        self.processes.append(process)
        return process

    def stop_all(self) -> list[str]:
        """Stop every process still running: SIGTERM, then SIGKILL after a grace period.
        Return a description of each one that outlived SIGKILL (blocked in the kernel)."""
        for process in self.processes:
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGTERM)
        stuck = []
        for process in self.processes:
            try:
                process.wait(timeout=TERM_GRACE_S)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                try:
                    process.wait(timeout=KILL_WAIT_S)
                except subprocess.TimeoutExpired:
                    stuck.append(f"{' '.join(map(str, process.args))}: {describe_process(process.pid)}")
        for process in self.processes:
            for stream in (process.stdin, process.stdout, process.stderr):
                if stream is not None:
                    stream.close()
        return stuck


@contextlib.contextmanager
def namespaces() -> Iterator[Namespaces]:
    """Two fresh namespaces (loopback up), removed with their processes on every exit path."""
    check_privileges()
    remove_stale()
    tag = f"{PREFIX}{os.getpid()}-{secrets.token_hex(3)}"
    made: list[str] = []
    pair = Namespaces(sender=f"{tag}-a", receiver=f"{tag}-b")
    failed = False
    try:
        for name in (pair.sender, pair.receiver):
            _ip("netns", "add", name)
            made.append(name)
            _ip("-n", name, "link", "set", "lo", "up")
        yield pair
    except BaseException:
        failed = True
        raise
    finally:
        stuck = pair.stop_all()
        for name in made:
            with contextlib.suppress(LiveError):
                _ip("netns", "delete", name)
        # A run that failed already reports its own error; a process left blocked in the
        # kernel is then a consequence, not the cause.
        if stuck and not failed:
            raise LiveError(f"a process of the run did not end even when killed: {stuck[0]}")
