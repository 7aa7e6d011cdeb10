"""Input specifications for ``Module.export`` (``nn.spec.Tensor((1, 784), "float32")``)."""
from __future__ import annotations


class Tensor:
    """Shape and dtype of one exported input; a dim may be a string to make it symbolic (``("n", 784)``)."""

    def __init__(self, shape, dtype: str = "float32"):
        self.shape = tuple(shape)
        self.dtype = dtype

    def __repr__(self) -> str:
        return f"spec.Tensor({self.shape}, {self.dtype!r})"
