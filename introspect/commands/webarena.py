"""``introspect webarena login``: sign into the WebArena sites and store the logins."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from introspect.commands.command import Command


async def cmd_webarena_login(args: argparse.Namespace) -> int:
    """Sign into the WebArena sites (or the local shop) and store the logins the env starts with."""
    from envs.browser import close_browser
    from envs.webarena import login as webarena_login

    folder = Path(args.auth_dir) if args.auth_dir else webarena_login.auth_dir()
    webarena_login.plan(args.site or [], os.environ)  # unknown site, unset URL, missing account: exit 2
    try:
        written = await webarena_login.login(args.site or [], folder)  # LoginFailed: one line, exit 1
    finally:
        await close_browser()
    for path in written:
        print(f"signed in: {path}")
    if folder.resolve() != webarena_login.auth_dir().resolve():
        print(f"the webarena env reads logins from {webarena_login.auth_dir()}: set WEBARENA_AUTH_DIR={folder}")
    return 0


def login_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--site",
        action="append",
        metavar="SITE",
        help="shopping, shopping_admin, reddit, gitlab or shop; repeat for one combined login "
        "(default: every configured site and the pairs WebArena uses)",
    )
    parser.add_argument("--auth-dir", help="where to write <sites>_state.json (default $WEBARENA_AUTH_DIR or .auth)")


COMMAND = Command(
    "webarena",
    "WebArena utilities (login)",
    actions=(
        Command(
            "login",
            "sign into the WebArena sites and store the logins tasks start with",
            login_arguments,
            cmd_webarena_login,
        ),
    ),
)
