"""The process that serves one GGUF file: llama-cpp-python's OpenAI-compatible server.

Started by ``nodes.runtime.local`` as ``python -m nodes.runtime.llama_server SETTINGS_JSON FD``: ``SETTINGS_JSON``
holds llama_cpp's ``ModelSettings`` fields, ``FD`` a listening socket on loopback that the parent
bound (so the port is known before the server exists, and a port in use is found by the parent).
The server lives exactly as long as the process that started it: it reads its standard input,
a pipe only the parent holds, and exits when that pipe closes. The kernel closes it however the
parent ends, SIGKILL included, so no server outlives its run.

The prefix cache is llama-cpp-python's RAM cache with its size counted honestly (``StateCache``).
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading

from llama_cpp import LlamaRAMCache


class StateCache(LlamaRAMCache):
    """llama-cpp-python's RAM prefix cache, bounded by all that its states hold.

    The library counts only each state's KV bytes against the capacity, but every state also keeps
    a copy of the logits array (the batch size times the vocabulary in floats: 100 MB for
    SmolLM2-135M, more than its KV state). Counted that way its 2 GB cache grew a server to 8 GB in
    one run of the local-smoke study; counted here it stays at the capacity."""

    @property
    def cache_size(self) -> int:
        return sum(
            state.llama_state_size + state.scores.nbytes + state.input_ids.nbytes for state in self.cache_state.values()
        )


def _exit_with_parent() -> None:
    """Block on standard input; its end means the parent is gone."""
    while sys.stdin.buffer.read(4096):
        pass
    os._exit(0)


def main() -> None:
    settings, fd = json.loads(sys.argv[1]), int(sys.argv[2])
    threading.Thread(target=_exit_with_parent, name="parent-watch", daemon=True).start()
    import uvicorn
    from llama_cpp.server.app import create_app
    from llama_cpp.server.settings import ModelSettings, ServerSettings

    listening = socket.socket(fileno=fd)
    host, port = listening.getsockname()[:2]
    app = create_app(  # loads the model now: a file llama.cpp cannot read ends the process here
        server_settings=ServerSettings(host=host, port=port),
        model_settings=[ModelSettings(**settings)],
    )
    if settings.get("cache"):
        from llama_cpp.server import app as served  # the one model create_app loaded (0.3.x)

        assert served._llama_proxy is not None
        served._llama_proxy().set_cache(StateCache(capacity_bytes=settings["cache_size"]))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
    server.run(sockets=[listening])


if __name__ == "__main__":
    main()
