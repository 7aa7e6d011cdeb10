"""User-facing stochastic schedule functions, one file per operator family (see ``registry.py``).

Pass one to ``tunefarm.tune(space=...)`` as a function, as ``"search_spaces/matmul.py:stochastic_schedule_mm"``
or by registered name (``"stochastic_schedule_mm"``).
"""
