"""LASER (paper 003): state-space exploration for WebShop, one node per state."""
