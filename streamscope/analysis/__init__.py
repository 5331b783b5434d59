"""The analysis driver every face calls: any input through the engine, plus the text report.

`analyze(path)` reads a recording, SSE body or chunk log once and gives every stream's
result and the conversation contract; `text_report.render` prints it for people.
"""

from .driver import Analysis, Failure, analyze, frame_source

__all__ = ["Analysis", "Failure", "analyze", "frame_source"]
