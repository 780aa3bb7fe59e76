"""Keeping API keys and other secrets out of what Introspect writes.

Its own module because both the model caller (nodes.runtime.llm: a failed call's message) and the
recorder (nodes.runtime.recording: every recorded line) pass text through it, and the caller imports
the recorder.
"""

from __future__ import annotations

import os
import re

_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD)$", re.IGNORECASE)


def secret_values() -> list[str]:
    """The values of the key-like environment variables (see ``redact``), longest first."""
    found = [value for name, value in os.environ.items() if len(value) >= 8 and _SECRET_NAME.search(name)]
    return sorted(found, key=len, reverse=True)


def redact(text: str) -> str:
    """``text`` with the value of every key-like environment variable (``*_API_KEY``,
    ``*_TOKEN``, ...) replaced by ``***``. A server may echo the key in its error message
    ("Incorrect API key provided: sk-..."), and a failed call's message goes to stderr, to
    the results row and into the checkpoint's record of the failed node."""
    for name, value in os.environ.items():
        if len(value) >= 8 and _SECRET_NAME.search(name) and value in text:
            text = text.replace(value, "***")
    return text
