"""`streamscope scan`: every recording of a folder at once.

`rows.analyze_file` is the per-file work, a plain function (a path or bytes in, rows out)
that any engine can run: the local process pool (`run.py`), Ray (`ray_engine.py`), Spark.
`summary.py` folds rows into the text summary and `store.py` writes them to DuckDB or
Parquet.
"""

from .rows import (
    AnomalyRow,
    CallRow,
    ContractRow,
    ExchangeRow,
    FileRows,
    analyze_bytes,
    analyze_file,
)

__all__ = [
    "AnomalyRow",
    "CallRow",
    "ContractRow",
    "ExchangeRow",
    "FileRows",
    "analyze_bytes",
    "analyze_file",
]
