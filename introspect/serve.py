"""``introspect serve``: LangGraph's own API server over PostgreSQL and Redis, one process.

The server is the stock ``langgraph-api`` (what ``langgraph dev`` and LangSmith Deployments run)
with the MIT Postgres+Redis runtime ``langgraph-runtime-pg`` in place of the in-memory one:
threads, checkpoints and the run queue live in Postgres, run signals and streams in Redis. Any
number of these processes, on any number of machines, pointed at the same two services, form
one deployment: each process takes runs from the shared queue (``--jobs`` at a time), and a
process that dies stops renewing its runs' heartbeats in Redis, so another process sweeps them
back into the queue and continues them from their last checkpoint.

This command checks what it is given, then runs the server in this process under uvicorn (whose
SIGINT/SIGTERM handling stops it gracefully), with the log format ``langgraph dev`` uses. It
serves every graph of the project's langgraph.json, as ``langgraph dev`` does.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import socket
import sys
from pathlib import Path
from urllib.parse import urlsplit

from errors import UserError
from introspect.checkpoint import CONNECT_TIMEOUT, one_line, redact, timed_conninfo

ROOT = Path(__file__).resolve().parents[1]  # the checkout: langgraph.json and the graphs it names
DEFAULT_PORT = 2024


class ServeError(UserError):
    """The server cannot start with what it was given (a missing package, a bad or unreachable URI)."""


def server_environment(database_uri: str, redis_uri: str, jobs: int, heartbeat: float) -> dict[str, str]:
    """The environment the server reads at import: the runtime, the services, the graphs."""
    graphs = json.loads((ROOT / "langgraph.json").read_text(encoding="utf-8"))["graphs"]
    return {
        "LANGGRAPH_RUNTIME_EDITION": "pg",
        "DATABASE_URI": database_uri,
        "REDIS_URI": redis_uri,
        "N_JOBS_PER_WORKER": str(jobs),
        "LG_BG_JOB_HEARTBEAT": str(heartbeat),
        # every graph of langgraph.json, by absolute path: the server may start in any folder
        "LANGSERVE_GRAPHS": json.dumps({name: str(ROOT / spec) for name, spec in graphs.items()}),
        "LANGGRAPH_ALLOW_BLOCKING": "false",  # a blocking call in a node fails loudly, as under Studio
        "LANGGRAPH_NO_VERSION_CHECK": "true",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }


def check_uri(uri: str | None, schemes: tuple[str, ...], option: str) -> str:
    """``uri`` is given and has one of ``schemes`` and a host; ServeError otherwise."""
    if not uri:
        raise ServeError(f"give {option} URI (or set ${option[2:].upper().replace('-', '_')})")
    parts = urlsplit(uri)
    if parts.scheme not in schemes or not parts.hostname:
        raise ServeError(f"{option} must be a {schemes[0]}://HOST[:PORT]/... URI, not {redact(uri)!r}")
    return uri


def check_database(uri: str) -> None:
    """``uri`` names a PostgreSQL database that accepts this connection: one that does not exist,
    or a server that is not Postgres (one that never answers the handshake, as Redis does), is a
    ServeError now, not a traceback or a hang once the server starts."""
    import psycopg

    try:
        psycopg.connect(timed_conninfo(uri)).close()
    except psycopg.Error as exc:
        hint = " (is it a PostgreSQL server?)" if isinstance(exc, psycopg.errors.ConnectionTimeout) else ""
        raise ServeError(f"cannot use --database-uri {redact(uri)}: {one_line(exc)}{hint}") from None


def check_redis(uri: str) -> None:
    """``uri`` names a Redis server that answers PING (a Postgres server there closes the
    connection: a ServeError now, not a traceback once the server starts)."""
    import redis

    client = redis.Redis.from_url(uri, socket_connect_timeout=CONNECT_TIMEOUT, socket_timeout=CONNECT_TIMEOUT)
    try:
        client.ping()
    except redis.RedisError as exc:
        raise ServeError(f"cannot use --redis-uri {redact(uri)}: {one_line(exc)}") from None
    finally:
        client.close()


def check_port(host: str, port: int) -> None:
    """``port`` is one this process can listen on at ``host`` (uvicorn would exit 3 on a taken one)."""
    try:
        with socket.create_server((host, port)):
            pass
    except OSError as exc:
        raise ServeError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


def command(args: argparse.Namespace) -> int:
    if importlib.util.find_spec("langgraph_runtime_pg") is None:
        raise ServeError("the Postgres runtime is not installed: pip install -e '.[server]'")
    if args.jobs < 1 or not 1 <= args.heartbeat < math.inf:  # nan too
        raise ServeError(f"--jobs must be at least 1 and --heartbeat at least 1 second, got {args.heartbeat}")
    if not 0 < args.port < 65536:
        raise ServeError(f"--port must be between 1 and 65535, got {args.port}")
    database = check_uri(args.database_uri, ("postgresql", "postgres"), "--database-uri")
    redis = check_uri(args.redis_uri, ("redis", "rediss"), "--redis-uri")
    check_port(args.host, args.port)
    check_database(database)
    check_redis(redis)
    # langgraph_api reads its configuration when first imported: set it before uvicorn imports the app
    os.environ.update(server_environment(database, redis, args.jobs, args.heartbeat))
    sys.path.insert(0, str(ROOT))
    import uvicorn

    where = f"http://{args.host}:{args.port}"
    print(f"introspect: serving the graphs of {ROOT / 'langgraph.json'} at {where}", file=sys.stderr, flush=True)
    uvicorn.run("langgraph_api.server:app", host=args.host, port=args.port, access_log=False, log_config=LOG_CONFIG)
    return 0


LOG_CONFIG = {  # langgraph dev's: the server's own records, one line each, on standard output
    "version": 1,
    "incremental": False,
    "disable_existing_loggers": False,
    "formatters": {"simple": {"class": "langgraph_api.logging.Formatter"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "simple", "stream": "ext://sys.stdout"}},
    "root": {"handlers": ["console"]},
}
