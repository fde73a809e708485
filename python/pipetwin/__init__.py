"""pipetwin: a digital twin for pipeline-parallel DNN training (docs/python.md).

The compiled extension (_pipetwin) does all the work. This package adds one thing on top:
tables come back as pandas DataFrames when pandas can be imported, and as plain Python
lists and columns otherwise, so that pandas stays optional.
"""

import importlib

from . import _pipetwin
from ._pipetwin import *  # noqa: F401,F403 -- load, simulate, plan, compare, ... as they are
from ._pipetwin import InputError, Result, RuntimeFailure

# Errors read as pipetwin.InputError in tracebacks, as documented.
for _error in (InputError, RuntimeFailure):
    _error.__module__ = __name__


def _pandas():
    """The pandas module, or None when it cannot be imported (asked at each call, so that a
    notebook that installs pandas later gets DataFrames)."""
    try:
        return importlib.import_module("pandas")
    except ImportError:
        return None


_span_columns = Result.spans  # the extension's property: {field: column}


def _spans(result):
    columns = _span_columns.__get__(result)
    pandas = _pandas()
    return columns if pandas is None else pandas.DataFrame(columns)


Result.spans = property(
    _spans,
    doc="The timeline's spans, one row per span in the timeline's order, one column per "
    "field: device, lane, name, op, stage, microbatch, range_lo, range_hi, iteration, "
    "start_s, end_s, bytes, peer_device. A pandas DataFrame when pandas is installed; "
    "otherwise a dict of columns (numpy arrays when numpy is installed, else lists).")


def sweep(scenario, vary, jobs=0, engine="analytic", allow_oom=False):
    """Simulates every point of the grid {path: [values]} over the scenario (its overrides
    hold at every point), each in its own process, `jobs` at once (0: one per CPU).

    Returns the rows of `pipetwin sweep --json`, fastest first: a pandas DataFrame when
    pandas is installed, with one column per varied path (as `sweep --csv` has) and then
    the row's other fields (index, iteration_time_s, bubble_ratio, status, ...); otherwise
    the list of dicts itself.
    """
    rows = _pipetwin.sweep(scenario, vary, jobs=jobs, engine=engine, allow_oom=allow_oom)
    pandas = _pandas()
    if pandas is None:
        return rows
    records = [{**row["point"], **{k: v for k, v in row.items() if k != "point"}}
               for row in rows]
    return pandas.DataFrame(records)
