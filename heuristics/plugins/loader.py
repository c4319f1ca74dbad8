"""Finding a plug-in policy's class from its spec.

Three forms name a plug-in (:func:`plugin_parts` tells them apart from the
built-in names, which never hold a dot, a slash or a class name)::

    package.module:ClassName[:key=value,...]    an importable module
    path/to/file.py:ClassName[:key=value,...]   a file (relative to the
                                                working directory)
    name[:key=value,...]                        a name an installed package
                                                registers in the entry-point
                                                group ``optsched.policies``

The class is imported on first use and cached with the sha256 of its
source file: the digest is part of the policy's identity in a results
store, so a changed policy is recomputed, never mixed with old rows.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path

from optsched.heuristics.spec import SpecError

ENTRY_POINT_GROUP = "optsched.policies"
"""The entry-point group where installed packages register policy names
(``[project.entry-points."optsched.policies"] name = "pkg.mod:Class"``)."""


@dataclass(frozen=True)
class PluginClass:
    """A plug-in's class, where it came from, and its source's digest.

    Attributes
    ----------
    target
        The spec's name as written: ``module:Class``, ``file.py:Class`` or
        an entry-point name.
    cls
        The class (its instances have a ``select(view)`` method).
    digest
        sha256 (hex) of the file that defines the class; empty when there
        is none (a class defined in an interactive session).
    """

    target: str
    cls: type
    digest: str


def plugin_parts(text: str) -> tuple[str, str] | None:
    """``(target, parameters)`` when ``text`` names a plug-in, else ``None``.

    ``text`` must not name a built-in policy (the caller asks the built-in
    table first). A module without a dot (``mine:Largest``) counts only
    with a capitalised class name, so that a mistyped built-in
    (``eazy:oracle``) is reported as an unknown policy. ``target`` keeps
    the case it was written in (module and class names are case-sensitive).
    """
    head, _, rest = text.strip().partition(":")
    head = head.strip()
    cls, _, params = rest.partition(":")
    cls = cls.strip()
    bare_module = head.isidentifier() and cls.isidentifier() and cls[:1].isupper()
    if _is_path_or_module(head) or bare_module:
        return f"{head}:{cls}", params
    if head in _entry_point_names():
        return head, rest
    return None


def _is_path_or_module(head: str) -> bool:
    return "." in head or "/" in head or "\\" in head


def _entry_point_names() -> dict[str, str]:
    # Read anew each time: a package installed during a session counts.
    return {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}


def load_plugin(target: str, spec: str) -> PluginClass:
    """The class ``target`` names (``spec`` is the whole spec, for errors).

    Raises
    ------
    SpecError
        A missing file or module, a missing class, a class without a
        ``select`` method: one line naming the spec.
    """
    if ":" not in target:
        value = _entry_point_names().get(target)
        if value is None:
            raise SpecError(spec, f"no installed policy named {target!r}")
        found = _load(value, spec)
        return PluginClass(target, found.cls, found.digest)
    return _load(target, spec)


def _load(target: str, spec: str) -> PluginClass:
    where, _, name = target.rpartition(":")
    if not name.isidentifier():
        raise SpecError(spec, f"{name!r} is not a class name")
    if where.endswith(".py") or "/" in where or "\\" in where:
        module, digest = _module_from_file(Path(where), spec)
    else:
        module, digest = _module_by_name(where, spec)
    cls = getattr(module, name, None)
    if not isinstance(cls, type):
        raise SpecError(spec, f"{where} defines no class {name!r}")
    if not callable(getattr(cls, "select", None)):
        raise SpecError(spec, f"class {name!r} has no select(view) method")
    return PluginClass(target, cls, digest)


_FILE_MODULES: dict[tuple[str, str], object] = {}


def _module_from_file(path: Path, spec: str) -> tuple[object, str]:
    if not path.is_file():
        raise SpecError(spec, f"no such file: {str(path)!r}")
    source = path.read_bytes()
    digest = hashlib.sha256(source).hexdigest()
    key = (str(path.resolve()), digest)
    module = _FILE_MODULES.get(key)
    if module is None:
        name = f"optsched_plugin_{digest[:16]}"
        loader_spec = importlib.util.spec_from_file_location(name, path)
        if loader_spec is None or loader_spec.loader is None:
            raise SpecError(spec, f"cannot load {str(path)!r} as Python")
        module = importlib.util.module_from_spec(loader_spec)
        sys.modules[name] = module  # dataclasses and pickling look it up
        try:
            loader_spec.loader.exec_module(module)
        except Exception as error:  # the user's code: any error, one line
            del sys.modules[name]
            raise SpecError(spec, f"{path} failed to load: {_one(error)}") from error
        _FILE_MODULES[key] = module
    return module, digest


def _module_by_name(name: str, spec: str) -> tuple[object, str]:
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name is not None and name.startswith(error.name):
            raise SpecError(spec, f"no module named {name!r}") from None
        raise SpecError(
            spec, f"module {name!r} failed to load: {_one(error)}"
        ) from error
    except Exception as error:  # the user's code: any error, one line
        raise SpecError(
            spec, f"module {name!r} failed to load: {_one(error)}"
        ) from error
    file = getattr(module, "__file__", None)
    digest = hashlib.sha256(Path(file).read_bytes()).hexdigest() if file else ""
    return module, digest


def _one(error: BaseException) -> str:
    text = f"{type(error).__name__}: {error}"
    return " ".join(text.split())
