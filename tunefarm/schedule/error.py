"""The one error type schedule primitives raise for illegal requests."""
from __future__ import annotations


class ScheduleError(Exception):
    """An illegal schedule request. ``primitive`` names the primitive, ``reason`` says why.

    The search treats it as "this candidate does not exist", so it must be the only exception a primitive
    raises for a bad request (never IndexError, KeyError, AssertionError...).
    """

    def __init__(self, primitive: str, reason: str):
        self.primitive = primitive
        self.reason = reason
        super().__init__(f"{primitive}: {reason}")
