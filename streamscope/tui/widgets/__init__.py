"""The replay's widgets, one per module."""

from ...dialects import severity, worst
from .call_table import CallTable
from .common import cut_cells, ms, tail_cells, worst_of
from .conversation_view import ConversationView
from .frame_detail import FrameDetail, repair_panel
from .frame_list import FrameList
from .info_line import InfoLine
from .strategy_label import RobustLabel, StrategyLabel, robust_label, strategy_label
from .timeline import Timeline
from .tool_results import results_panel
from .trap_line import TrapLine

__all__ = [
    "CallTable",
    "ConversationView",
    "FrameDetail",
    "FrameList",
    "InfoLine",
    "RobustLabel",
    "StrategyLabel",
    "Timeline",
    "TrapLine",
    "cut_cells",
    "ms",
    "tail_cells",
    "worst_of",
    "repair_panel",
    "results_panel",
    "robust_label",
    "severity",
    "strategy_label",
    "worst",
]
