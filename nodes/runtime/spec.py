"""A model spec (``provider:model``, ``local``, ``gguf:<file>``) read without the model stack.

Below the settings (nodes.runtime.context checks a spec when a Context is built), the model
caller (nodes.runtime.llm builds the model a spec names) and the embedded model
(nodes.runtime.local serves ``local`` and ``gguf:``): each of them reads a spec here, so none of
them imports another to do it.
"""

from __future__ import annotations

from nodes.runtime.model_errors import ModelConfigError

LOCAL = "local"  # the embedded model's spec (nodes.runtime.local)
LOCAL_NAME = "SmolLM2-135M-Instruct"  # the model ``local`` serves
GGUF = "gguf"  # the provider of ``gguf:/path/file.gguf``


def parse_spec(spec: str) -> tuple[str, str]:
    """Split ``provider:model``; raise ModelConfigError on anything else."""
    if spec == LOCAL:
        return LOCAL, LOCAL_NAME
    provider, sep, name = spec.partition(":")
    if not sep or not provider.strip() or not name.strip():
        raise ModelConfigError(
            f"malformed model spec {spec!r}: use provider:model (e.g. openai:gpt-4o-mini) "
            "or local (the embedded model) or gguf:<file.gguf> or scripted:<file.jsonl> or replay:<recording.jsonl>"
        )
    return provider.strip(), name.strip()
