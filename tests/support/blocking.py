"""A blocking-call guard for whole graph runs, stricter than LangGraph's server.

``langgraph dev`` refuses blocking calls on its event loop with blockbuster, but lets file
reads and writes, directory listings and lock waits pass. The project's rule is stricter
(DESIGN: blocking work, file loading included, runs in a thread or once at import), so this
guard keeps those: any blocking call made on the loop from code of the project's packages
raises ``BlockingError``. Only metadata lookups (``os.stat``, ``os.path.*``: a path checked
to exist) pass, as on the server.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from blockbuster import BlockBuster

PACKAGES = ["envs", "nodes", "graphs", "introspect", "prompts"]


@contextmanager
def no_blocking() -> Iterator[BlockBuster]:
    guard = BlockBuster(PACKAGES)
    for name in list(guard.functions):
        if name == "os.stat" or name.startswith("os.path."):
            del guard.functions[name]
    guard.activate()
    try:
        yield guard
    finally:
        guard.deactivate()
