"""LASER (paper 003): state-space exploration over a declared state space, one node per state."""
