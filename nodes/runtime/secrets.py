"""Keeping API keys and other secrets out of what Introspect writes.

Its own module because both the model caller (nodes.runtime.llm: a failed call's message) and the
recorder (nodes.runtime.recording: every recorded line) pass text through it, and the caller imports
the recorder.
"""

from __future__ import annotations

import os

SECRET_ENDINGS = ("KEY", "TOKEN", "SECRET", "PASSWORD")  # of a variable's name, in any case


def secret_values() -> list[str]:
    """The values of the key-like environment variables (see ``redact``), longest first.
    Asked for every model call's record: the names are tested before a value is read (a
    regular expression over every name cost four times as much)."""
    found = [value for name in os.environ if _secret_name(name) and len(value := os.environ[name]) >= 8]
    return sorted(found, key=len, reverse=True)


def _secret_name(name: str) -> bool:
    return name.upper().endswith(SECRET_ENDINGS)


def redact(text: str) -> str:
    """``text`` with the value of every key-like environment variable (``*_API_KEY``,
    ``*_TOKEN``, ...) replaced by ``***``. A server may echo the key in its error message
    ("Incorrect API key provided: sk-..."), and a failed call's message goes to stderr, to
    the results row and into the checkpoint's record of the failed node."""
    for value in secret_values():
        if value in text:
            text = text.replace(value, "***")
    return text
