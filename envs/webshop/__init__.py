"""WebShop (text shop): the environment (``env``) and its parts."""

from envs.webshop.env import WebShopEnv

__all__ = ["WebShopEnv"]
