"""Reports of benchmark runs: one HTML page or Markdown with figures."""

from optsched.report.build import build_report

__all__ = ["build_report"]
