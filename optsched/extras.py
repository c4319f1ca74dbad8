"""Optional dependencies: import one, or say which extra installs it.

The base install (``pip install optsched``) runs every command but three
features, each behind an extra of ``pyproject.toml``:

========================  =================  ====================
feature                   module             extra
========================  =================  ====================
``worst-case --vs SPEC``  ``hypothesis``     ``worstcase``
``export -o X.parquet``   ``pyarrow``        ``parquet``
``bench --dask[-local]``  ``distributed``    ``dask``
========================  =================  ====================

``all`` installs the three; ``test`` installs them with pytest.
"""

from __future__ import annotations

import importlib
from types import ModuleType


class MissingExtra(ImportError):
    """An optional dependency of a feature is not installed.

    The message is one line naming the pip command that installs it; the CLI
    prints it as ``optsched: error: ...`` with exit status 2.
    """

    def __init__(self, module: str, extra: str, feature: str) -> None:
        super().__init__(
            f"{feature} needs {module}: pip install 'optsched[{extra}]'",
            name=module,
        )
        self.extra = extra
        self.feature = feature


def require(module: str, extra: str, feature: str) -> ModuleType:
    """Import ``module`` for ``feature``, or raise :class:`MissingExtra`.

    Parameters
    ----------
    module
        Module to import, e.g. ``"hypothesis"``.
    extra
        The optsched extra that installs it, e.g. ``"worstcase"``.
    feature
        What needs it, as the user asked for it, e.g. ``"worst-case --vs SPEC"``.

    Returns
    -------
    ModuleType
        The imported module.
    """
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise MissingExtra(module, extra, feature) from error
