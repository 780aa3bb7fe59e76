"""nodes.runtime.secrets: which environment variables count as secrets, and their redaction."""

from __future__ import annotations

import pytest

from nodes.runtime.secrets import redact, secret_values


def test_key_like_names_in_any_case_are_secrets_and_others_are_not(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-long-enough-1")
    monkeypatch.setenv("github_token", "ghp-long-enough")
    monkeypatch.setenv("Db_Password", "hunter2-hunter2")
    monkeypatch.setenv("CLIENT_SECRET", "s3cr3t-value-xyz-long")
    monkeypatch.setenv("KEYBOARD_LAYOUT", "dvorak-programmer")  # KEY, but not at the end
    monkeypatch.setenv("SHORT_KEY", "abc")  # under eight characters: too common to replace
    found = secret_values()
    assert {"sk-long-enough-1", "ghp-long-enough", "hunter2-hunter2", "s3cr3t-value-xyz-long"} <= set(found)
    assert "dvorak-programmer" not in found and "abc" not in found
    assert [len(v) for v in found] == sorted((len(v) for v in found), reverse=True)  # longest first
    text = "key sk-long-enough-1, token ghp-long-enough, layout dvorak-programmer, abc"
    assert redact(text) == "key ***, token ***, layout dvorak-programmer, abc"
