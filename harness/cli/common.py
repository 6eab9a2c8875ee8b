"""What every command shares: the console, the inventory, opening ``-t``, JSON, errors.

Public on purpose: command modules import these instead of reaching into each other.
Heavy modules (Rich, the target kinds) are imported inside the functions.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.cli.options import State
from harness.errors import HarnessError

if TYPE_CHECKING:
    from rich.console import Console

    from harness.config import HostsConfig
    from harness.targets.base import Target
    from harness.views.lines import Lines


def console(stderr: bool = False) -> Console:
    """A Rich console that prints text as given (no highlighting); off a terminal (a pipe, a
    file) no line is wrapped at all, on one a long line wraps at its words (:func:`line`)."""
    from rich.console import Console

    out = Console(stderr=stderr, highlight=False, soft_wrap=False, emoji=False)
    out.soft_wrap = not out.is_terminal
    return out


def line(out: Console, obj: Any, options: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """One line of a view as ``out`` prints it: on a terminal, wrapped at word boundaries at
    its width, continuation lines under the line's own indent; into a pipe or a file, never
    wrapped (whoever reads it, a program or an editor, gets each line whole)."""
    from rich.text import Text

    if not isinstance(obj, str | Text) or options.get("width"):
        return obj, options
    if not out.is_terminal:
        return obj, {**options, "soft_wrap": True}
    if isinstance(obj, str):
        obj = Text.from_markup(obj) if options.get("markup", True) else Text(obj)
    rest = {k: v for k, v in options.items() if k not in ("soft_wrap", "markup")}
    if "\n" in obj.plain or obj.cell_len <= out.width:
        return obj, {**rest, "soft_wrap": True}
    indent = len(obj.plain) - len(obj.plain.lstrip(" "))
    indent = indent if indent * 2 <= out.width else 0
    wrapped = obj[indent:].wrap(out, out.width - indent, overflow="fold")
    for piece in wrapped:
        piece.rstrip()
    pad = " " * indent
    return Text(pad) + Text("\n" + pad).join(wrapped), {**rest, "soft_wrap": True}


def hosts_config() -> HostsConfig:
    """The inventory: ``--hosts``, else ``$HARNESS_HOSTS``, else ``hosts.toml`` found upwards."""
    from harness.config import find_hosts_file
    from harness.targets.registry import load_hosts

    return load_hosts(find_hosts_file(State.hosts_file))


def target_for(spec: str | None, accept_new: bool = False) -> Target:
    """The target ``-t SPEC`` names (nothing connects until first use)."""
    from harness.targets.registry import open_target

    return open_target(spec, hosts_config(), accept_new_host_key=accept_new)


def emit(out: Console, parts: Any) -> None:
    """Print a view's renderables: a markup string or a Text as one line that never
    re-wraps (a command, a path), anything else (a table) as Rich lays it out."""
    from rich.text import Text

    for part in parts:
        obj, options = line(out, part, {"soft_wrap": isinstance(part, str | Text)})
        out.print(obj, **options)


def show(out: Console, lines: Lines) -> None:
    """Print a view's :class:`~harness.views.lines.Lines`, each with its own print options."""
    from rich.console import Console

    if lines.piped_width and not out.is_terminal:
        width = max(out.width, lines.piped_width)
        out = Console(
            file=out.file, width=width, highlight=False, no_color=out.no_color, emoji=False
        )
    for objects, options in lines:
        if len(objects) == 1:
            obj, options = line(out, objects[0], options)
            objects = (obj,)
        out.print(*objects, **options)


def print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, indent=2) + "\n")


def report_error(exc: HarnessError, prefix: str = "") -> None:
    """One red line (yellow for an interrupt), then the hint, on stderr."""
    from rich.markup import escape

    from harness.errors import Interrupted

    err = console(stderr=True)
    label = (
        "[bold yellow]interrupted:[/]" if isinstance(exc, Interrupted) else "[bold red]error:[/]"
    )
    text = prefix + exc.message
    err.print(f"{label} {escape(text)}" if text else label.replace(":", ""), soft_wrap=True)
    if exc.hint:
        err.print(f"[yellow]hint:[/] {escape(exc.hint)}", soft_wrap=True)


def check_output(path: Path, option: str) -> None:
    """Refuse an output file that cannot be written -- before the command changes anything.

    A missing folder, a folder in the file's place, no permission, a read-only file system, a
    name too long: one line naming the path and the option, never a traceback after the work.
    """
    import os

    from harness.errors import UsageError

    folder = path.parent
    problem = None
    if path.is_dir():
        problem = "is a folder"
    elif not folder.is_dir():
        problem = f"its folder {folder} does not exist" + (
            "" if not folder.exists() else " (it is a file)"
        )
    elif len(os.fsencode(path.name)) > _name_max(folder):
        problem = f"the file name is {len(os.fsencode(path.name))} bytes, too long here"
    elif path.exists() and not os.access(path, os.W_OK):
        problem = "the file is not writable"
    elif not path.exists() and not os.access(folder, os.W_OK | os.X_OK):
        reason = "read-only file system" if _read_only(folder) else "permission denied"
        problem = f"cannot create a file in {folder} ({reason})"
    if problem is not None:
        raise UsageError(
            f"{option} {path}: {problem}; nothing was done",
            "name a file in a folder you can write (mkdir -p it first)",
        )


def write_output(path: Path, text: str, option: str) -> None:
    """Write a command's output file; an OS failure is one line naming the path."""
    from harness.errors import UsageError

    try:
        path.write_text(text, encoding="utf-8")
    except OSError as e:
        raise UsageError(
            f"{option} {path}: could not write it: {e.strerror or type(e).__name__}",
            "name a file in a folder you can write",
        ) from None


def _name_max(folder: Path) -> int:
    import os

    try:
        return os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError):
        return 255


def _read_only(folder: Path) -> bool:
    import os

    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        return False
