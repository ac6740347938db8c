"""Compute: the protocol, the runtimes, operators, arrangements and the shared-arrangement registry.

Vocabulary modules that ``planner/`` may import: ``timestamp``, ``ids``, ``scalar``,
``relation``, ``mfp``, ``dataflow``, ``protocol``, ``errors``.  Everything else in this
package is runtime machinery that only ``mzlite/`` (the controller) constructs.
``compute`` never sees SQL text.
"""
