"""ALFWorld (text household, TextWorld engine): the environment (``env``) and its parts."""

from envs.alfworld.env import ALFWorldEnv

__all__ = ["ALFWorldEnv"]
