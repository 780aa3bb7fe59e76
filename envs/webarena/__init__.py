"""WebArena (browser, accessibility tree): the environment (``env``) and its parts."""

from envs.webarena.env import WebArenaEnv

__all__ = ["WebArenaEnv"]
