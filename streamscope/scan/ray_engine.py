"""`scan --engine ray`: the same per-file function as Ray tasks, results in file order.

Ray is the optional `ray` extra. The workers read the files at the paths given, so on a
cluster those must be on a file system every node sees.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Iterator
from typing import Any

from .errors import ScanError
from .run import Done, scan_one

EXTRA = "ray"
IN_FLIGHT = 64  # tasks submitted ahead: bounds the results held, whatever the file count


def ray_results(paths: list[str], keep_stamp: bool) -> Iterator[Done]:
    try:
        import ray
    except ImportError:
        raise ScanError(f"--engine ray needs Ray: pip install 'streamscope[{EXTRA}]'") from None
    started = not ray.is_initialized()
    if started:  # RAY_ADDRESS names a cluster; without it, a Ray on this machine
        ray.init(log_to_driver=False, include_dashboard=False, logging_level=logging.WARNING)
    try:
        # (Any: Ray's stubs count scan_one's defaulted parameter out of `.remote`'s)
        task: Any = ray.remote(scan_one)
        pending: deque = deque()
        for path in paths:
            pending.append(task.remote(path, keep_stamp))
            if len(pending) >= IN_FLIGHT:
                yield ray.get(pending.popleft())
        while pending:
            yield ray.get(pending.popleft())
    finally:
        if started:
            ray.shutdown()
