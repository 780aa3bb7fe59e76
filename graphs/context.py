"""``Context`` lives in ``nodes.runtime.context`` (below both nodes and graphs); this name stays for
users and Studio configurations written against ``graphs.context``."""

from nodes.runtime.context import Context, ContextError

__all__ = ["Context", "ContextError"]
