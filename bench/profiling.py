"""cProfile, per phase, on every thread: where mzlite spends its time.

Owns: ``PhaseProfiler``.  The calling thread (the adapter, the coordinator, the
controller) gets a fresh ``cProfile.Profile`` per phase.  Threads started after
``install()`` (the runtimes' drivers) each get one profiler for their whole life, installed
through ``threading.setprofile``; a phase's share of a thread is the difference of two
snapshots of its stats taken at the phase's start and end (``snapshot_stats`` reads a
profiler without stopping it).  Each phase thus has two reports: "caller" (what the
statement path costs on the calling thread, including its waits) and "threads" (what the
runtimes did meanwhile).

Invariant: profiling changes timings (cProfile costs 1.5-3x on call-heavy code), so the
harness marks profiled figures as such; profiles are for finding hot paths, not for the
ratio table.

Deliberately not here: sampling profilers, flame graphs.  ``--profile-dir`` writes
``pstats`` files (open with ``python -m pstats FILE`` or snakeviz) for deeper digging.
A thread's frames that are still on its stack when a snapshot is taken (its driver loop)
have incomplete cumulative times; the functions it calls and returns from are exact.
"""
from __future__ import annotations

import cProfile
import io
import os
import pstats
import sys
import threading
from typing import Dict, List, Optional, Tuple


def _is_idle(func) -> bool:
    filename, _, name = func
    if filename == "~":
        return "acquire" in name and "lock" in name
    return ((filename.endswith("threading.py") and name in ("wait", "_wait_for_tstate_lock", "join"))
            or (filename.endswith("queue.py") and name == "get"))


def _drop_idle(stats: dict) -> float:
    """Remove the runtime threads' idle waits (a lock acquire, Event/Condition.wait, Queue.get)
    from a stats dict, so the report lists work; returns the seconds of idle own-time removed."""
    idle = 0.0
    for func in [f for f in stats if _is_idle(f)]:
        idle += stats[func][2] if func[0] == "~" else 0.0
        del stats[func]
    for func, (cc, nc, tt, ct, callers) in list(stats.items()):
        if any(_is_idle(c) for c in callers):
            stats[func] = (cc, nc, tt, ct, {c: v for c, v in callers.items() if not _is_idle(c)})
    return idle


class _StatsHolder:
    """What ``pstats.Stats`` accepts: an object with ``create_stats`` and ``stats``."""

    def __init__(self, stats):
        self.stats = stats

    def create_stats(self):
        pass


def _snapshot(prof: cProfile.Profile) -> dict:
    prof.snapshot_stats()
    return dict(prof.stats)


def _diff(after: dict, before: dict) -> dict:
    out = {}
    for func, (cc, nc, tt, ct, callers) in after.items():
        b = before.get(func)
        if b is not None:
            bcc, bnc, btt, bct, bcallers = b
            cc, nc, tt, ct = cc - bcc, nc - bnc, tt - btt, ct - bct
            newcallers = {}
            for k, v in callers.items():
                bv = bcallers.get(k)
                if bv is None:
                    newcallers[k] = v
                elif isinstance(v, tuple):
                    d = tuple(x - y for x, y in zip(v, bv))
                    if any(d):
                        newcallers[k] = d
                elif v - bv:
                    newcallers[k] = v - bv
            callers = newcallers
        if nc > 0 or tt > 1e-9 or ct > 1e-9:
            out[func] = (cc, nc, tt, ct, callers)
    return out


def _shorten_paths(text: str) -> str:
    """Print ``compute/replica/core.py:12(step)`` rather than the absolute path."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    text = text.replace(root, "")
    for p in sorted({p for p in sys.path if p and os.path.isdir(p)}, key=len, reverse=True):
        if p.rstrip(os.sep) + os.sep != root:
            text = text.replace(p.rstrip(os.sep) + os.sep, "")
    return text


class PhaseProfiler:
    def __init__(self, top: int = 25, out_dir: Optional[str] = None, phases: Optional[List[str]] = None,
                 self_top: int = 15):
        self.top = top
        self.self_top = self_top
        self.out_dir = out_dir
        self.phases = phases          # None: every phase
        self.thread_profs: Dict[str, cProfile.Profile] = {}
        self._lock = threading.Lock()
        self.reports: List[Tuple[str, str, str]] = []   # (phase, which, text)
        self._phase = None
        self._caller = None
        self._thread_before = {}

    # -- threads
    def install(self) -> None:
        threading.setprofile(self._thread_hook)

    def uninstall(self) -> None:
        threading.setprofile(None)

    def _thread_hook(self, frame, event, arg):
        sys.setprofile(None)
        prof = cProfile.Profile()
        name = threading.current_thread().name
        with self._lock:
            key = name
            i = 2
            while key in self.thread_profs:
                key = f"{name}#{i}"
                i += 1
            self.thread_profs[key] = prof
        prof.enable()

    # -- phases
    def wants(self, phase: str) -> bool:
        """Phases are named exactly (``k=1`` is not ``k=100``); a trailing ``*`` matches a prefix."""
        return self.phases is None or any(p == phase or (p.endswith("*") and phase.startswith(p[:-1]))
                                          for p in self.phases)

    def start(self, phase: str) -> None:
        self._phase = phase
        if not self.wants(phase):
            self._caller = None
            return
        with self._lock:
            profs = dict(self.thread_profs)
        self._thread_before = {k: _snapshot(p) for k, p in profs.items()}
        self._caller = cProfile.Profile()
        self._caller.enable()

    def pause(self) -> None:
        """Exclude harness work (result checks) from the calling thread's profile."""
        if self._caller is not None:
            self._caller.disable()

    def resume(self) -> None:
        if self._caller is not None:
            self._caller.enable()

    def stop(self) -> None:
        if self._caller is None:
            return
        self._caller.disable()
        phase = self._phase
        caller_stats = pstats.Stats(self._caller)
        with self._lock:
            profs = dict(self.thread_profs)
        merged = None
        idle = 0.0
        for k, p in profs.items():
            d = _diff(_snapshot(p), self._thread_before.get(k, {}))
            idle += _drop_idle(d)
            if not d:
                continue
            s = pstats.Stats(_StatsHolder(d))
            if merged is None:
                merged = s
            else:
                merged.add(s)
        self._add_report(phase, "caller thread", caller_stats)
        if merged is not None:
            self._add_report(phase, f"other threads ({len(profs)}; {idle:.2f} s of idle lock/queue waits "
                                    f"left out, still inside their callers' cumtime)", merged)
        self._caller = None

    def _add_report(self, phase: str, which: str, stats: pstats.Stats) -> None:
        buf = io.StringIO()
        stats.stream = buf
        stats.sort_stats("cumulative").print_stats(self.top)
        if self.self_top:
            print(f"-- top {self.self_top} by own time (tottime) --", file=buf)
            stats.sort_stats("tottime").print_stats(self.self_top)
        text = _shorten_paths(buf.getvalue())
        # drop pstats' preamble lines that carry no information here
        lines, seen_header = [], False
        for ln in text.splitlines():
            t = ln.strip()
            if not t or t.startswith("Ordered by") or t.startswith("List reduced"):
                continue
            if t.endswith("function calls in") or (" function calls " in t and seen_header):
                continue    # the second sort repeats the totals line
            if " function calls " in t:
                seen_header = True
            lines.append(ln)
        self.reports.append((phase, which, "\n".join(lines)))
        if self.out_dir:
            os.makedirs(self.out_dir, exist_ok=True)
            safe = "".join(ch if ch.isalnum() or ch in "-_=" else "_" for ch in f"{phase}-{which.split()[0]}")
            stats.dump_stats(os.path.join(self.out_dir, safe + ".prof"))

    def text(self) -> str:
        out = []
        for phase, which, text in self.reports:
            out.append(f"==== profile: mzlite, phase {phase}, {which}, top {self.top} by cumulative time ====")
            out.append(text)
        return "\n".join(out)
