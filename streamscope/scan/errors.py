"""What stops a scan before it starts or as it writes: one line, exit status 2."""


class ScanError(Exception):
    """A database that cannot be opened or written, a missing optional extra."""
