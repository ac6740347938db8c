"""Human and JUnit reports of sqllogictest runs.

Owns: how a failure is printed (file:line, the SQL, expected and actual), the per-file
line, the summary line, and the JUnit XML file.

Invariant: the summary line is exactly ``N passed, M failed`` followed by
``, K skipped`` only when K > 0; it is the last line the runner prints.

Deliberately not here: running records or deciding outcomes.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET

__all__ = ["format_failure", "format_file_line", "summary_line", "write_junit"]

_MAX_LINES = 40


def _indent(lines, prefix="    "):
    lines = list(lines)
    if len(lines) > _MAX_LINES:
        extra = len(lines) - _MAX_LINES
        lines = lines[:_MAX_LINES] + [f"... ({extra} more)"]
    if not lines:
        return [prefix + "(nothing)"]
    out = []
    for ln in lines:
        for sub in str(ln).split("\n"):
            out.append(prefix + sub)
    return out


def format_failure(f) -> str:
    out = [f"FAIL {f.path}:{f.line}: {f.message}"]
    if f.sql:
        out.extend(_indent(f.sql.split("\n")))
    if f.expected or f.actual:
        out.append("  expected:")
        out.extend(_indent(f.expected))
        out.append("  actual:")
        out.extend(_indent(f.actual))
    return "\n".join(out)


def counts_text(passed: int, failed: int, skipped: int) -> str:
    s = f"{passed} passed, {failed} failed"
    if skipped:
        s += f", {skipped} skipped"
    return s


def format_file_line(res) -> str:
    s = f"{res.path}: {counts_text(res.passed, res.failed, res.skipped)}"
    if getattr(res, "plans", 0):
        s += f" ({res.plans} EXPLAIN plan records not compared)"
    if res.not_applicable:
        s += f" ({res.not_applicable} not applicable to this engine)"
    if res.stopped:
        s += " (stopped at the first failure)"
    if getattr(res, "bailed", None):
        s += f" ({res.bailed})"
    return s


def summary_line(passed: int, failed: int, skipped: int) -> str:
    return counts_text(passed, failed, skipped)


def write_junit(path: str, results) -> None:
    """One <testsuite> per file, one <testcase> per record that ran."""
    root = ET.Element("testsuites")
    tp = tf = ts = 0
    for res in results:
        suite = ET.SubElement(root, "testsuite", name=res.path,
                              tests=str(res.passed + res.failed + res.skipped),
                              failures=str(res.failed), skipped=str(res.skipped), errors="0",
                              time=f"{res.seconds:.3f}")
        by_line = {(f.path, f.line): f for f in res.failures}
        for (p, line, status, message) in res.cases:
            case = ET.SubElement(suite, "testcase", classname=p, name=f"{p}:{line}")
            if status == "failed":
                f = by_line.get((p, line))
                el = ET.SubElement(case, "failure", message=message)
                el.text = format_failure(f) if f is not None else message
            elif status == "skipped":
                ET.SubElement(case, "skipped", message=message)
        tp += res.passed
        tf += res.failed
        ts += res.skipped
    root.set("tests", str(tp + tf + ts))
    root.set("failures", str(tf))
    root.set("skipped", str(ts))
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
