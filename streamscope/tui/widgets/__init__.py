"""The replay's widgets, one per module."""

from .call_table import CallTable, strategy_label
from .common import MARK, SEVERITY_STYLE, ms, severity, worst
from .conversation_view import ConversationView
from .frame_detail import FrameDetail, repair_panel
from .frame_list import FrameList
from .timeline import Timeline

__all__ = [
    "MARK",
    "SEVERITY_STYLE",
    "CallTable",
    "ConversationView",
    "FrameDetail",
    "FrameList",
    "Timeline",
    "ms",
    "repair_panel",
    "severity",
    "strategy_label",
    "worst",
]
