"""pip's own index machinery, in process: which wheel a pin means, and a session to fetch it.

The lazy ``pypi:`` fetch (:mod:`harness.targets.lazywheel`) needs the wheel's URL and the
index's sha256 for it, and an HTTP session that talks to the index as pip would. Both come
from pip itself: ``pip download``'s own option parser (so ``pip.conf``, ``PIP_*`` variables,
``--index-url``/``--extra-index-url``/``--find-links``, trusted hosts, certificates, client
certificates, proxies and keyring apply exactly as for ``pip download``), its
``PackageFinder`` (the same choice of wheel, tags and yanked handling) and its
``PipSession`` (retries, auth, proxies, TLS). This uses pip's internal API (``pip._internal``),
which pip does not promise to keep: anything missing there raises :class:`PipUnavailable`, and
the caller falls back to running ``pip download`` as a program.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any


class PipUnavailable(Exception):
    """pip's internals are not what this module knows (another pip version): use pip's CLI."""


@dataclass(frozen=True)
class WheelLink:
    """One wheel on the index: where it is, its file name, and what the index says it hashes to."""

    url: str
    filename: str
    sha256: str | None


@contextlib.contextmanager
def quiet_pip() -> Iterator[None]:
    """pip's warnings ("Could not fetch URL ...") would reach the root logger's stderr fallback;
    the caller reports problems itself (the CLI path says them in its own words)."""
    log = logging.getLogger("pip")
    handler = logging.NullHandler()
    old = log.propagate
    log.addHandler(handler)
    log.propagate = False
    try:
        yield
    finally:
        log.removeHandler(handler)
        log.propagate = old


class PipIndex:
    """pip ``download``'s options, session and finder, for one harness command.

    ``args`` are ``pip download`` options (the user's config applies under them, as on the
    command line). The session is made once and closed with :meth:`close`.
    """

    def __init__(self, args: Sequence[str]) -> None:
        self._args = list(args)
        self._session: Any = None
        self._command: Any = None
        self._parsed: dict[tuple[str, ...], Any] = {}

    def _options(self, extra: Sequence[str]) -> Any:
        """pip's options for these ``extra`` arguments, parsed once (each parse reads pip's
        config files again)."""
        if tuple(extra) in self._parsed:
            return self._parsed[tuple(extra)]
        try:
            from pip._internal.commands import create_command

            command = create_command("download")
            options, _args = command.parse_args([*self._args, *extra, "-d", ".", "x"])
        except (ImportError, AttributeError, TypeError) as exc:
            raise PipUnavailable(f"pip's index code is not usable here ({exc})") from None
        except SystemExit:  # pip's parser rejected its own config: let pip say why
            raise PipUnavailable("pip rejected its configuration") from None
        # no HTTP cache: a cached whole-file response must never answer a Range request
        options.cache_dir = None
        self._command = self._command or command
        self._parsed[tuple(extra)] = options
        return options

    @property
    def session(self) -> Any:
        """pip's ``PipSession`` (a requests session: auth, proxies, certificates, retries)."""
        if self._session is None:
            options = self._options([])
            try:
                self._session = self._command._build_session(options)
            except (AttributeError, TypeError) as exc:
                raise PipUnavailable(f"pip's session is not usable here ({exc})") from None
        return self._session

    def find(self, name: str, version: str, tags: Sequence[str] = ()) -> WheelLink | None:
        """The wheel pip would pick for ``name==version`` (for ``tags``/Python 3.12 when
        given, as ``pip download --platform ... --python-version 3.12``); None when none."""
        extra = [a for t in tags for a in ("--platform", t)]
        if tags:
            extra += ["--python-version", "3.12"]
        options = self._options(extra)
        try:
            from packaging.specifiers import SpecifierSet
            from pip._internal.cli.cmdoptions import make_target_python

            finder = self._command._build_package_finder(
                options=options,
                session=self.session,
                target_python=make_target_python(options),
                ignore_requires_python=options.ignore_requires_python,
            )
            with quiet_pip():
                best = finder.find_best_candidate(name, SpecifierSet(f"=={version}"))
            candidate = best.best_candidate
        except (ImportError, AttributeError, TypeError) as exc:
            raise PipUnavailable(f"pip's finder is not usable here ({exc})") from None
        if candidate is None or not candidate.link.is_wheel:
            return None
        link = candidate.link
        sha = link.hash if link.hash_name == "sha256" else None
        return WheelLink(link.url_without_fragment, link.filename, sha)

    def versions(self, name: str, tags: Sequence[str] = ()) -> list[str]:
        """Every version of ``name`` with a wheel pip would take (for ``tags`` too, when
        given), as the index lists them; unsorted."""
        found: set[str] = set()
        for extra in ([], tags) if tags else ([],):
            options = self._options(
                [
                    *(a for t in extra for a in ("--platform", t)),
                    *(["--python-version", "3.12"] if extra else []),
                ]
            )
            try:
                from pip._internal.cli.cmdoptions import make_target_python

                finder = self._command._build_package_finder(
                    options=options,
                    session=self.session,
                    target_python=make_target_python(options),
                    ignore_requires_python=True,
                )
                with quiet_pip():
                    found.update(
                        str(c.version) for c in finder.find_all_candidates(name) if c.link.is_wheel
                    )
            except (ImportError, AttributeError, TypeError) as exc:
                raise PipUnavailable(f"pip's finder is not usable here ({exc})") from None
        return sorted(found)

    def close(self) -> None:
        if self._session is not None:
            with contextlib.suppress(Exception):
                self._session.close()
            self._session = None
