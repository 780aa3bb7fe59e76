"""``Context`` lives in ``nodes.context`` (below both nodes and graphs); this name stays for
users and Studio configurations written against ``graphs.context``."""

from nodes.context import Context, ContextError

__all__ = ["Context", "ContextError"]
