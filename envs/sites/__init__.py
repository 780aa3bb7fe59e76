"""Local websites the project serves for offline browser tasks (see envs.sites.serve)."""
