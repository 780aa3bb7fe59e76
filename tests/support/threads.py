"""How many threads were inside a function at once: for code that must run one call at a time."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any


class Overlap:
    """Wraps ``function``; each call stays inside for ``hold`` seconds more, so calls that are
    not kept apart do overlap, and ``most`` is the largest number inside at once."""

    def __init__(self, function: Callable[..., Any], hold: float = 0.002) -> None:
        self.function, self.hold = function, hold
        self.inside = self.most = 0
        self._count = threading.Lock()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        with self._count:
            self.inside += 1
            self.most = max(self.most, self.inside)
        time.sleep(self.hold)
        try:
            return self.function(*args, **kwargs)
        finally:
            with self._count:
                self.inside -= 1
