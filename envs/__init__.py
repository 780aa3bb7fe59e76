"""Benchmark environments behind one async protocol (see envs.base)."""

from envs.base import (
    ENV_CLASSES,
    Env,
    EnvError,
    Observation,
    StepResult,
    UnknownEnvError,
    UnknownTaskError,
    make_env,
)

__all__ = [
    "ENV_CLASSES",
    "Env",
    "EnvError",
    "Observation",
    "StepResult",
    "UnknownEnvError",
    "UnknownTaskError",
    "make_env",
]
