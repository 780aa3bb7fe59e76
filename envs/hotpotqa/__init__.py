"""HotpotQA (question answering over Wikipedia): the environment (``env``) and its parts."""

from envs.hotpotqa.env import HotpotQAEnv

__all__ = ["HotpotQAEnv"]
