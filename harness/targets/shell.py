"""The one module that turns argv lists into POSIX shell text.

SSH can only carry a command *line*: the remote ``sshd`` hands it to the user's login shell as
``$SHELL -c LINE``. Every argument therefore has to be quoted exactly once, by one piece of code
that is tested against hostile input, so that a file name like ``x; rm -rf ~`` arrives as one
argument instead of running. Nothing else in harness builds shell text (no f-string command
lines); it calls :func:`command` or :func:`join` and prints through :func:`mask`.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping, Sequence

from harness.errors import UsageError

#: What POSIX ``sh`` and ``env`` accept as a variable name; anything else is refused rather than
#: quoted, because a quoted ``'A B'=1`` would be taken as the program name, not an assignment.
ENV_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

#: Parts of an environment variable's name (split at ``_``, digits and camelCase) that make
#: its value a secret: ``HF_TOKEN``, ``AWS_SECRET_ACCESS_KEY``, ``DB_PASSWORD`` -- but not
#: ``TOKENIZERS_PARALLELISM`` or ``MAX_TOKENS`` (whole parts only).
SECRET_PARTS = frozenset(
    {"TOKEN", "SECRET", "SECRETS", "PASSWORD", "PASSWD", "PASSPHRASE", "KEY", "APIKEY"}
    | {"ACCESSKEY", "SECRETKEY", "AUTHTOKEN", "CREDENTIAL", "CREDENTIALS", "CREDS"}
)
_NAME_PARTS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+")
#: A secret value shorter than this is not looked for in other text (``HF_TOKEN = "1"``
#: would turn ``--epochs 10`` into ``--epochs ***0``); the variable's own value still is.
MIN_SECRET = 6
#: A secret is masked only where it stands whole: not glued to a letter, digit or ``_``.
_WORD = "A-Za-z0-9_"

MASK = "***"

#: Words that shells parse as syntax in command position (POSIX, bash, zsh).
RESERVED_WORDS = frozenset(
    {"!", "{", "}", "case", "do", "done", "elif", "else", "esac", "fi", "for", "if", "in"}
    | {"then", "until", "while", "function", "select", "time", "coproc", "repeat"}
    | {"foreach", "end", "nocorrect", "noglob"}
)

#: What :func:`command` prints on stderr with ``report_pid``: RS + ``harness-pid=`` + pid + RS.
#: The pid is also the process group id (sshd starts each session with ``setsid``), so a
#: timed-out command and its children can be killed with ``kill -9 -PID`` from a second session.
PID_PRINTF = "printf '\\036harness-pid=%s\\036\\n' $$ >&2"
_PID_RE = re.compile(rb"\x1eharness-pid=(\d+)\x1e\n")


#: Exit status of :data:`NOT_PYTHON_GUARD` when a shell, not Python, was handed the code.
NOT_PYTHON_EXIT = 97
NOT_PYTHON_MARK = b"harness: not a Python interpreter"
#: The first lines of every program harness hands a target's ``python`` with ``-c``. To
#: Python, a string statement that does nothing. To a shell (``python = "/bin/bash"``), line
#: one is ``:`` (``''`` + ``':'``), line two says so and exits -- before anything else runs
#: (else the bootstrap's ``import json`` would be ImageMagick's screen grab).
NOT_PYTHON_GUARD = f"''':'\necho '{NOT_PYTHON_MARK.decode()}' >&2; exit {NOT_PYTHON_EXIT}\n'''\n"


def quote(s: str) -> str:
    """Quote one argument for a POSIX shell (``shlex.quote``), refusing NUL bytes.

    A NUL cannot travel in an argv: the remote shell would silently cut the argument short,
    so it is an error here rather than a surprise there.
    """
    if "\x00" in s:
        raise UsageError(f"argument contains a NUL byte: {s[:40]!r}")
    return shlex.quote(s)


def command_word(s: str) -> str:
    """Quote the program name: like :func:`quote`, but never leaves a keyword or assignment.

    ``shlex.quote`` leaves ``a=b``, ``if`` or ``time`` bare because they hold no special
    characters, yet as the first word of a line the shell would read them as a variable
    assignment (running the *next* argument as the program) or as syntax. Quoted, they are
    plain words.
    """
    q = quote(s)
    if q == s and ("=" in s or s in RESERVED_WORDS):
        return f"'{s}'"  # safe: quote() left it bare, so it holds no quote characters
    return q


def join(argv: Sequence[str]) -> str:
    """Quote every element and join with spaces; ``shlex.split`` gives ``argv`` back.

    The result is a complete command: its first word is quoted with :func:`command_word`.
    """
    if isinstance(argv, str):
        # A bare string would be quoted character by character; that is always a caller bug.
        raise UsageError(f"expected an argv list, got the string {argv[:40]!r}")
    return " ".join(command_word(a) if i == 0 else quote(a) for i, a in enumerate(argv))


def check_env_name(name: str) -> str:
    """Return ``name`` if it is a valid environment variable name, else raise UsageError."""
    if not ENV_NAME_RE.match(name):
        raise UsageError(
            f"invalid environment variable name {name!r}",
            hint="names must match [A-Za-z_][A-Za-z0-9_]*",
        )
    return name


def env_prefix(env: Mapping[str, str] | None) -> str:
    """``env K=V K2=V2 `` (trailing space) for a non-empty mapping, else ``""``.

    ``env`` rather than bare ``K=V prog`` assignments so that the prefix also works in front
    of ``exec`` and reads the same in logs. Keys are sorted so that the line is reproducible.
    """
    if not env:
        return ""
    parts = [f"{check_env_name(k)}={quote(v)}" for k, v in sorted(env.items())]
    return "env " + " ".join(parts) + " "


def command(
    argv: Sequence[str],
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    *,
    exec_: bool = False,
    report_pid: bool = False,
) -> str:
    """Build one shell line: ``cd CWD && [exec] env K=V prog 'arg' ...``.

    Args:
        argv: the program and its arguments; never shell text.
        env: extra environment variables for the program.
        cwd: directory to change into first; the command does not run if ``cd`` fails.
        exec_: replace the shell with the program, so that the pid reported with
            ``report_pid`` is the program's and no idle shell is left waiting.
        report_pid: first print the shell's pid on stderr (see :data:`PID_PRINTF`); the
            caller strips it with :func:`split_pid`.
    """
    if isinstance(argv, str) or not argv:
        raise UsageError(f"expected a non-empty argv list, got {argv!r}")
    if env and "=" in argv[0]:
        # ``env`` would read ``a=b`` as one more assignment, not as the program.
        raise UsageError(f"program name {argv[0]!r} contains '=', which env cannot run")
    line = env_prefix(env) + join(argv)
    if exec_:
        line = "exec " + line
    if cwd is not None:
        line = f"cd {quote(cwd)} && {line}"
    if report_pid:
        line = f"{PID_PRINTF}; {line}"
    return line


def split_pid(stderr: bytes) -> tuple[int | None, bytes]:
    """Find and remove the first pid line printed by ``report_pid``.

    Searched for rather than expected at offset 0: login scripts may print before it.
    """
    m = _PID_RE.search(stderr)
    if m is None:
        return None, stderr
    return int(m.group(1)), stderr[: m.start()] + stderr[m.end() :]


def is_secret_name(name: str) -> bool:
    """True for a variable whose value is a secret: a whole part of its name says so."""
    return any(part.upper() in SECRET_PARTS for part in _NAME_PARTS.findall(name))


def secrets_in(env: Mapping[str, str] | None) -> list[str]:
    """Values of variables whose names are secret (``HF_TOKEN``, ``AWS_SECRET_ACCESS_KEY``)."""
    if not env:
        return []
    return [v for k, v in env.items() if v and is_secret_name(k)]


def mask(text: str, secrets: Iterable[str]) -> str:
    """Replace every secret value in ``text`` with ``***`` where it stands whole, quoted
    forms included.

    The quoted form (``'it'"'"'s'``) is what appears in a command line built here, so it is
    masked first; then the raw value. Longer secrets go first so that a secret containing
    another secret is masked whole. A value shorter than :data:`MIN_SECRET`, or one glued to
    a letter or digit (``abcdef`` inside ``xabcdef``), is left alone: masking it would make
    the text untrue without hiding anything.
    """
    for secret in sorted({s for s in secrets if len(s) >= MIN_SECRET}, key=len, reverse=True):
        for form in dict.fromkeys((shlex.quote(secret), secret)):
            whole = re.compile(rf"(?<![{_WORD}]){re.escape(form)}(?![{_WORD}])")
            text = whole.sub(MASK, text)
    return text


def mask_env(env: Mapping[str, str], secrets: Iterable[str] = ()) -> dict[str, str]:
    """An environment as it is shown and recorded: a secret variable's own value is ``***``
    (whatever its length), the others with the ``secrets`` masked where they stand whole."""
    found = list(secrets)
    return {k: MASK if v and is_secret_name(k) else mask(v, found) for k, v in env.items()}
