"""Per-host outcomes of one command across hosts (Fabric's ``GroupResult`` is the model)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from harness.errors import HarnessError

T = TypeVar("T")


@dataclass(frozen=True)
class HostResult(Generic[T]):
    host: str
    value: T | None = None
    error: str | None = None  # one line, as the CLI would print it
    hint: str | None = None
    exit_code: int = 0

    @property
    def ok(self) -> bool:
        return self.error is None and self.exit_code == 0

    def unwrap(self) -> T:
        """The value of a host that succeeded (a failed one has none)."""
        if self.value is None:
            raise ValueError(f"{self.host} failed: {self.error}")
        return self.value


@dataclass(frozen=True)
class GroupResult(Generic[T]):
    results: tuple[HostResult[T], ...]

    @property
    def succeeded(self) -> tuple[HostResult[T], ...]:
        return tuple(r for r in self.results if r.ok)

    @property
    def failed(self) -> tuple[HostResult[T], ...]:
        return tuple(r for r in self.results if not r.ok)

    @property
    def ok(self) -> bool:
        return not self.failed

    def __getitem__(self, host: str) -> HostResult[T]:
        for r in self.results:
            if r.host == host:
                return r
        raise KeyError(host)

    @property
    def exit_code(self) -> int:
        """0 when every host succeeded, else the worst host's code (2 beats 1)."""
        return max((r.exit_code or (2 if r.error else 0) for r in self.results), default=0)

    def summary(self) -> str:
        return " · ".join(
            f"{r.host} ok" if r.ok else f"{r.host} failed ({r.error or f'exit {r.exit_code}'})"
            for r in self.results
        )


def run_each(hosts: Sequence[str], fn: Callable[[str], T]) -> GroupResult[T]:
    """``fn(host)`` on every host at once (threads: the work is I/O); errors become results."""

    def one(host: str) -> HostResult[T]:
        try:
            return HostResult(host, value=fn(host))
        except HarnessError as exc:
            return HostResult(host, error=exc.message, hint=exc.hint, exit_code=exc.exit_code)

    if not hosts:
        return GroupResult(())
    from concurrent.futures import ThreadPoolExecutor  # only with hosts to run on (~5 ms)

    with ThreadPoolExecutor(max_workers=min(16, len(hosts))) as pool:
        return GroupResult(tuple(pool.map(one, hosts)))


def values(result: GroupResult[T]) -> dict[str, T]:
    return {r.host: r.unwrap() for r in result.results if r.ok}
