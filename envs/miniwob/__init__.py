"""MiniWoB++ (browser): the environment (``env``) and its parts."""

from envs.miniwob.env import MiniWoBEnv

__all__ = ["MiniWoBEnv"]
