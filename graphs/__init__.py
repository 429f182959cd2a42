"""Ready-made agent graphs with the guard in place of ``ToolNode``."""

from guard_graphs.agent import build_guarded_agent

__all__ = ["build_guarded_agent"]
