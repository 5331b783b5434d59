"""`scan --engine ray`: the same per-file function as Ray tasks, results in file order.

Ray is the optional `ray` extra. The workers read the files at the paths given, so on a
cluster those must be on a file system every node sees.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator

from .errors import ScanError
from .run import Done, scan_one

EXTRA = "ray"
IN_FLIGHT = 64  # tasks submitted ahead: bounds the results held, whatever the file count


def ray_results(paths: list[str], keep_stamp: bool) -> Iterator[Done]:
    try:
        import ray
    except ImportError:
        raise ScanError(f"--engine ray needs Ray: pip install 'streamscope[{EXTRA}]'") from None
    if not ray.is_initialized():
        # RAY_ADDRESS names a cluster; without it, a Ray on this machine
        ray.init(log_to_driver=False, include_dashboard=False)
    task = ray.remote(scan_one)
    pending: deque = deque()
    todo = iter(paths)
    for path in todo:
        pending.append(task.remote(path, keep_stamp))
        if len(pending) >= IN_FLIGHT:
            yield ray.get(pending.popleft())
    while pending:
        yield ray.get(pending.popleft())
