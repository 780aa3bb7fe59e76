"""The process that serves one GGUF file: llama-cpp-python's OpenAI-compatible server.

Started by ``nodes.local`` as ``python -m nodes.llama_server SETTINGS_JSON FD``: ``SETTINGS_JSON``
holds llama_cpp's ``ModelSettings`` fields, ``FD`` a listening socket on loopback that the parent
bound (so the port is known before the server exists, and a port in use is found by the parent).
The server lives exactly as long as the process that started it: it reads its standard input,
a pipe only the parent holds, and exits when that pipe closes. The kernel closes it however the
parent ends, SIGKILL included, so no server outlives its run.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading


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
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
    server.run(sockets=[listening])


if __name__ == "__main__":
    main()
