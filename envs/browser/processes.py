"""The Chromium process tree of this Python process' browser, read from /proc.

Why /proc: Playwright gives no handle on the browser's processes, but the benchmarks need their
memory and the crash tests (and a relaunch) must kill exactly this process' Chromium, not
another engineer's or another worker's. The browser is launched with ``OWNER_FLAG``, a switch
Chromium ignores, which marks its main process in its command line.
"""

from __future__ import annotations

import os
import signal

OWNER_FLAG = f"--introspect-owner={os.getpid()}"


def _proc_table() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, command line) for every readable process."""
    table: dict[int, tuple[int, str]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read().decode(errors="replace")
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                cmdline = fh.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        table[int(entry)] = (ppid, cmdline)
    return table


def browser_pids() -> list[int]:
    """The pids of this process' Chromium: the marked browser process and all its descendants."""
    table = _proc_table()
    roots = [pid for pid, (_, cmd) in table.items() if OWNER_FLAG in cmd and "--type=" not in cmd]
    found, frontier = set(roots), list(roots)
    while frontier:
        parent = frontier.pop()
        for pid, (ppid, _) in table.items():
            if ppid == parent and pid not in found:
                found.add(pid)
                frontier.append(pid)
    return sorted(found)


def browser_memory_bytes() -> dict[str, int]:
    """This process' Chromium memory: ``rss`` (sum of resident sets, counts shared pages once per
    process) and ``pss`` (proportional set size, shared pages split; the fairer total)."""
    totals = {"rss": 0, "pss": 0, "processes": 0}
    for pid in browser_pids():
        try:
            with open(f"/proc/{pid}/smaps_rollup") as fh:
                fields = dict(line.split(":", 1) for line in fh if ":" in line)
        except OSError:
            continue
        totals["rss"] += int(fields.get("Rss", "0 kB").split()[0]) * 1024
        totals["pss"] += int(fields.get("Pss", "0 kB").split()[0]) * 1024
        totals["processes"] += 1
    return totals


def kill_browser_processes() -> None:
    """SIGKILL this process' Chromium (a crashed browser's leftovers, or a crash on purpose)."""
    for pid in browser_pids():
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            continue
