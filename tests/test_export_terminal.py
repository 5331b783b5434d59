"""`export` to standard output: a pipe gets the exact bytes; a terminal is shown them with
control characters escaped (a recording is untrusted: an ESC there could retitle the
terminal or clear it), and told so on stderr."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

BODY = b'data: {"choices":[{"index":0,"delta":{"content":"\x1b]0;pwned\x07 hi \xc2\x85"}}]}\n\n'
BODY += b"data: [DONE]\n\n"


def test_a_pipe_gets_the_bytes_and_a_terminal_sees_them_escaped(tmp_path):
    path = tmp_path / "esc.sse"
    path.write_bytes(BODY)
    command = [sys.executable, "-m", "streamscope", "export", "--format", "sse", str(path)]
    piped = subprocess.run(command, capture_output=True, timeout=60)
    assert piped.returncode == 0 and piped.stdout == BODY
    leader, follower = pty.openpty()
    try:
        done = subprocess.run(command, stdout=follower, stderr=subprocess.PIPE, timeout=60)
        os.close(follower)
        shown = b""
        while True:
            try:
                got = os.read(leader, 65536)
            except OSError:  # the terminal closed: everything was read
                break
            if not got:
                break
            shown += got
    finally:
        os.close(leader)
    assert done.returncode == 0
    assert b"\x1b" not in shown and b"\xc2\x85" not in shown
    assert b"\\x1b]0;pwned\\x07 hi \\x85" in shown
    assert b"control characters are shown escaped" in done.stderr
