"""Columns as a pandas DataFrame, for notebooks: pandas is optional (the `pandas` extra), never required."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def data_frame(columns: Mapping[str, Any]) -> Any:
    """`pandas.DataFrame(columns)`; ImportError saying how to install pandas when it is missing."""
    try:
        import pandas as pd  # type: ignore[import-untyped]
    except ImportError:
        raise ImportError("to_pandas() needs pandas: pip install 'grok-tui[pandas]' (or pip install pandas)") from None
    return pd.DataFrame(dict(columns))
