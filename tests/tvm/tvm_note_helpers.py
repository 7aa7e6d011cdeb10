"""What the course notes take from outside TVM, for the tests that run their code blocks.

The notes read their weights with ``pickle``; here the same call reads them through tunefarm's allowlisting
unpickler (``import pickle as pkl`` becomes ``from tvm_note_helpers import pkl``). ``IPython.display.Code``
(a notebook's display) becomes a stand-in that keeps the text, so a test can read what was shown.
"""
from __future__ import annotations

import types

from tunefarm.graph.params import SafeUnpickler
from tunefarm.graph.params import random_mlp_params as mlp_weights  # seeded weights of the course MLP's shapes

CLASS_NAMES = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
               "Ankle boot"]


def _load(file):
    return SafeUnpickler(file).load()


pkl = types.SimpleNamespace(load=_load)


class Code:
    """``IPython.display.Code(text, language="python")``: keeps the text it was given."""

    def __init__(self, data: str, language: str | None = None):
        if not isinstance(data, str):
            raise TypeError(f"Code takes text, got {type(data).__name__}")
        self.data = data
        self.language = language

    def __str__(self) -> str:
        return self.data


IPython = types.SimpleNamespace(display=types.SimpleNamespace(Code=Code))

