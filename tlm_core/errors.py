"""One line of an error for the user: the CLI, the pages, records and messages quote errors through these.

TVM's errors carry a long C++ backtrace and an IR dump; a message keeps the line that says what went wrong.
"""

from __future__ import annotations

LIMIT = 300  # characters of an error's line that a message keeps


def first_line(err: BaseException | str, limit: int = LIMIT) -> str:
    """The gist of an error: its first non-blank line (for TVM's ScheduleError, the first after
    "Error message:"), cut to `limit` characters; the exception's type name when it has no text."""
    return _pick(err, 0, limit)


def last_line(err: BaseException | str, limit: int = LIMIT) -> str:
    """The last non-blank line of an error (where TVM and subprocesses put the message, after the backtrace),
    cut to `limit` characters; the exception's type name when it has no text."""
    return _pick(err, -1, limit)


def summary(err: BaseException) -> str:
    """`TypeName: first line` (the type name alone when the error has no text)."""
    name = type(err).__name__
    return f"{name}: {first_line(err)}" if str(err).strip() else name


def _pick(err: BaseException | str, index: int, limit: int) -> str:
    text = str(err)
    if index == 0 and "Error message:" in text:
        text = text.split("Error message:", 1)[1]
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return "" if isinstance(err, str) else type(err).__name__
    return lines[index][:limit]
