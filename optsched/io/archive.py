"""The workload traces optsched knows, fetched on first use and cached.

``pwa:NAME`` names one of :data:`TRACES` wherever a trace file is expected
(:func:`resolve_trace_path`, which the readers call before they open a
path). The file is downloaded once into a per-user cache and its sha256 is
checked on every use, so a run always reads the bytes a result was computed
from. Downloading, hashing and the cache location are pooch's (the
scientific-Python standard for data files with known hashes; the cache
folder comes from platformdirs through :func:`pooch.os_cache`).

Environment
-----------
``OPTSCHED_DATA_DIR``
    The cache folder (default: the per-user cache folder of platformdirs,
    e.g. ``~/.cache/optsched`` on Linux).
``OPTSCHED_TRACES_FROM``
    A mirror, local folder or URL, holding the files under their
    :attr:`ArchiveTrace.file` names, used instead of each trace's download
    URL (what ``optsched traces fetch --from`` does for one command).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from optsched.errors import InputError

if TYPE_CHECKING:
    import pooch

PREFIX = "pwa:"
"""What starts a trace name given in place of a file path."""

DATA_DIR_VARIABLE = "OPTSCHED_DATA_DIR"
MIRROR_VARIABLE = "OPTSCHED_TRACES_FROM"

_PWA = "https://www.cs.huji.ac.il/labs/parallel/workload"

PWA_CITATION = (
    'Dror G. Feitelson, Dan Tsafrir and David Krakov, "Experience with using '
    'the Parallel Workloads Archive", J. Parallel & Distributed Comput. 74(10), '
    "pp. 2967-2982, Oct 2014."
)
"""How the Parallel Workloads Archive asks its users to cite it."""


@dataclasses.dataclass(frozen=True)
class ArchiveTrace:
    """One trace optsched can fetch.

    Attributes
    ----------
    name
        What follows ``pwa:`` (the archive's file name without ``.swf``).
    file
        The file name in the cache and in a mirror.
    machine
        The machine and site, from the trace's header.
    processors
        The machine size the header gives.
    jobs
        Job records in the file.
    years
        The period the log covers (``synthetic`` for a model's output).
    archive_url
        The Parallel Workloads Archive's page for the log.
    download_url
        Where the exact bytes (``sha256``) are downloaded from: a public
        copy of the archive's file.
    sha256
        The file's digest; a download or a cached copy that differs is
        refused.
    acknowledge
        Whom the archive asks users of this log to thank (the header's
        ``Acknowledge:`` line).
    note
        What differs from a plain archive log, if anything.
    """

    name: str
    file: str
    machine: str
    processors: int
    jobs: int
    years: str
    archive_url: str
    download_url: str
    sha256: str
    acknowledge: str
    note: str = ""


def _github(repo: str, commit: str, path: str) -> str:
    return f"https://github.com/{repo}/raw/{commit}/{path}"


TRACES: tuple[ArchiveTrace, ...] = (
    ArchiveTrace(
        name="KTH-SP2-1996-2.1-cln",
        file="KTH-SP2-1996-2.1-cln.swf",
        machine="IBM SP2, Swedish Royal Institute of Technology (KTH)",
        processors=100,
        jobs=28_476,
        years="1996-1997",
        archive_url=f"{_PWA}/l_kth_sp2/index.html",
        download_url=_github(
            "pkoperek/cloudsimplus-gateway",
            "1a0b7a14e1f0369f57717ff313c46655b2241cf4",
            "src/main/resources/KTH-SP2-1996-2.1-cln.swf",
        ),
        sha256="fba36494c4e4257f72182e8b629ebb0bcb054b3b82851ef957445bd627adcc87",
        acknowledge="Lars Malinowsky",
    ),
    ArchiveTrace(
        name="NASA-iPSC-1993-3.1-cln",
        file="NASA-iPSC-1993-3.1-cln.swf.gz",
        machine="Intel iPSC/860, NASA Ames Research Center",
        processors=128,
        jobs=18_239,
        years="1993",
        archive_url=f"{_PWA}/l_nasa_ipsc/index.html",
        download_url=_github(
            "cloudsimplus/cloudsimplus-examples",
            "4394086",
            "src/main/resources/workload/swf/NASA-iPSC-1993-3.1-cln.swf.gz",
        ),
        sha256="5589ae9b2fb78e3bf92de097497cf33a91607de1ad54563e43533f7827597f29",
        acknowledge="Bill Nitzberg",
        note="no wait times (submit times are start times), no requested times",
    ),
    ArchiveTrace(
        name="LLNL-Atlas-2006-2.1-cln",
        file="LLNL-Atlas-2006-2.1-cln.swf",
        machine="Linux cluster Atlas, Lawrence Livermore National Laboratory",
        processors=9_216,
        jobs=43_778,
        years="2006-2007",
        archive_url=f"{_PWA}/l_llnl_atlas/index.html",
        download_url=_github(
            "tgasla/rl-cloudsimplus",
            "86042b4",
            "common/traces/LLNL-Atlas-2006-2.1-cln.swf",
        ),
        sha256="8b3aaab739fa0bda8abaccc37c207d0b19d9d147b19e7f47a1641133a56fd07f",
        acknowledge="Moe Jette, LLNL",
        note="no wait times; 8,233 jobs without a requested time",
    ),
    ArchiveTrace(
        name="hpc2n",
        file="hpc2n.swf",
        machine="Linux cluster Seth, HPC2N, Umea, Sweden",
        processors=240,
        jobs=3_170,
        years="2002",
        archive_url=f"{_PWA}/l_hpc2n/index.html",
        download_url=_github(
            "aleasimulator/alea", "a3315f0", "Alea/data-set/hpc2n.swf"
        ),
        sha256="eaaccb339ef0f313d1b975cf02cc518b7cc012fb0c609ef2af2dbd0291aa74ba",
        acknowledge="Ake Sandgren",
        note="excerpt: the first 3,170 jobs of HPC2N-2002-2.2 (raw log)",
    ),
    ArchiveTrace(
        name="lublin_256",
        file="lublin_256.swf",
        machine="synthetic, Lublin-Feitelson model, 256 processors",
        processors=256,
        jobs=10_000,
        years="synthetic",
        archive_url=f"{_PWA}/m_lublin99.html",
        download_url=_github(
            "DIR-LAB/deep-batch-scheduler", "cd433e3", "data/lublin_256.swf"
        ),
        sha256="a394ab3d81179ebcf645a1cbd593a60b6dff7f11a510e1e6285c45f43310c962",
        acknowledge="Uri Lublin, Hebrew University",
        note="model: Lublin & Feitelson, JPDC 63(11), 2003; no requested times",
    ),
)
"""The traces ``optsched traces list`` shows, in that order."""


def find(name: str) -> ArchiveTrace:
    """The known trace called ``name`` (with or without ``pwa:``, its file
    name or its name, in any case).

    Raises
    ------
    InputError
        An unknown name, listing the known ones.
    """
    wanted = name.removeprefix(PREFIX).lower()
    for trace in TRACES:
        if wanted in (trace.name.lower(), trace.file.lower()):
            return trace
    known = ", ".join(trace.name for trace in TRACES)
    raise InputError(f"unknown trace; known traces: {known}", PREFIX + wanted)


def cache_dir() -> Path:
    """Where fetched traces are kept: ``OPTSCHED_DATA_DIR`` if set, else the
    per-user cache folder (:func:`pooch.os_cache`)."""
    import pooch

    given = os.environ.get(DATA_DIR_VARIABLE)
    return Path(given).expanduser() if given else Path(pooch.os_cache("optsched"))


def cached_path(name: str) -> Path:
    """Where ``name`` is (or will be) kept; it may not be fetched yet."""
    return cache_dir() / find(name).file


def _registry(mirror: str | None) -> pooch.Pooch:
    import pooch

    urls = {trace.file: trace.download_url for trace in TRACES}
    if mirror and not Path(mirror).is_dir():
        # A URL mirror: every file under its own name below the URL.
        urls = {file: f"{mirror.rstrip('/')}/{file}" for file in urls}
    return pooch.create(
        path=cache_dir(),
        base_url="",
        registry={trace.file: f"sha256:{trace.sha256}" for trace in TRACES},
        urls=urls,
    )


def _copy_from(folder: Path) -> Any:
    """A pooch downloader copying the file of that name from a local folder
    (pooch then checks its hash like any download)."""

    def copy(url: str, output_file: Any, unused_pooch: Any) -> None:
        source = folder / url.rsplit("/", 1)[-1]
        if not source.is_file():
            raise InputError(
                f"no such file in the mirror folder {str(folder)!r}", source
            )
        if isinstance(output_file, str | Path):
            shutil.copyfile(source, output_file)
        else:
            with source.open("rb") as data:
                shutil.copyfileobj(data, output_file)

    return copy


def fetch(name: str, mirror: str | None = None) -> Path:
    """The cached copy of a known trace, downloaded first if it is missing
    or differs from its sha256.

    Parameters
    ----------
    name
        A name of :data:`TRACES` (see :func:`find`).
    mirror
        A local folder or a URL holding the file under its name, instead of
        the trace's download URL; ``None``: ``OPTSCHED_TRACES_FROM`` if set.

    Raises
    ------
    InputError
        An unknown name, a file missing from the mirror, a failed download
        or a file whose sha256 differs (nothing is then kept in the cache).
    """
    import pooch
    import requests

    trace = find(name)
    mirror = mirror or os.environ.get(MIRROR_VARIABLE) or None
    registry = _registry(mirror)
    copier = _copy_from(Path(mirror)) if mirror and Path(mirror).is_dir() else None
    where = f"{PREFIX}{trace.name}"
    # pooch's own log lines would name the download URL even when the file
    # is copied from a mirror folder: one note of ours instead.
    pooch.get_logger().setLevel("WARNING")
    if not (registry.abspath / trace.file).is_file():
        source = mirror or registry.get_url(trace.file)
        print(f"optsched: note: fetching {where} from {source}", file=sys.stderr)
    try:
        return Path(registry.fetch(trace.file, downloader=copier))
    except InputError:
        raise
    except ValueError:  # pooch: the sha256 differs (and nothing was kept)
        raise InputError(
            f"refused: the fetched file's sha256 is not {trace.sha256}", where
        ) from None
    except (OSError, requests.RequestException) as error:
        source = registry.get_url(trace.file)
        raise InputError(f"cannot fetch {source}: {error}", where) from None


def resolve_trace_path(path: str | Path) -> Path:
    """The file to open for ``path``: itself, or for ``pwa:NAME`` the cached
    trace (fetched on first use, :func:`fetch`).

    Every reader calls this before it opens a trace, so that every command
    and suite taking a trace file also takes a ``pwa:`` name.
    """
    text = str(path)
    if not text.startswith(PREFIX):
        return Path(path)
    return fetch(text)
