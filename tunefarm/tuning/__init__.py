"""The tuning job: the loop that wires the search, the farm and the database (``api.py``, ``job.py``).

It sits above all three: the search never imports the farm or the database, and the farm runs the job's
work through handlers it imports by name (``handlers.py``).
"""
from .api import DEFAULT_MEASURE, EARLY_STOP_FACTOR, TuneResult, tune, tune_tasks

__all__ = ["tune", "tune_tasks", "TuneResult", "DEFAULT_MEASURE", "EARLY_STOP_FACTOR"]
