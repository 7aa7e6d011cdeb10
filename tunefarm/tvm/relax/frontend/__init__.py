"""``relax.frontend``: ``nn``, PyTorch-style model definitions."""
from . import nn

__all__ = ["nn"]
