"""Figures: Gantt charts of schedules and charts of competitive gaps.

Every function takes ``ax=None`` (a new figure when ``None``), draws on the
axes and returns them; none calls ``plt.show()``.
"""

from optsched.plot.gantt import gantt, job_colour, processor_runs

__all__ = ["gantt", "job_colour", "processor_runs"]
