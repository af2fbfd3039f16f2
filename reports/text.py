"""Cleaning of untrusted text, for every writer of a report.

A store under test is free to say anything: its exception messages, its returned values, the
adapter's name and the options a user passes end up in ``report.json``, ``report.md``,
``junit.xml`` and on the terminal. Each of those strings passes through :func:`clean` (or its
one-line, block and data forms) on its way out, which

- masks secrets (:func:`mask_secrets`: a database URL's password, ``password=...``);
- in text (Markdown, XML, the terminal), escapes every invisible character visibly, in
  Python's notation: control characters as ``\\x01``, ``\\x1b``, ``\\r``, format and
  separator characters as ``\\u202e``, ``\\u2028``, lone surrogates as ``\\udc80`` (a backslash
  already in the text is left as it is); in JSON (:func:`clean_value`), lone surrogates only,
  since JSON holds control characters as escapes of its own;
- cuts a string longer than :data:`LIMIT` characters, marker included, the marker saying how
  many were cut: ``... [12,345 characters cut]``.

What comes out holds only characters its format accepts (UTF-8 and XML 1.0 for text, UTF-8
JSON for data), so no writer can fail on it or produce a file its reader rejects. Cleaning a
cleaned string changes nothing. Pure: no I/O.
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from typing import Any

LIMIT = 4000
"""Characters kept of one untrusted string (a message, a reason, a name, an option value)."""

BLOCK_LIMIT = 100_000
"""Characters kept of a text made of many (a rendered trace, a replay script); each of its
lines is held to :data:`LIMIT`."""

_MARGIN = 1000  # masking looks this far past the cut, so a URL across it is still recognized
_HIDDEN = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_SUSPECT = re.compile(r"[^\x20-\x7e]")
_SHORT = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}

_URL_PASSWORD = re.compile(
    r"(?P<head>\b[A-Za-z][A-Za-z0-9+.\-]{0,30}://[^:/@\s]{0,256}:)(?P<password>[^@\s]+)(?=@)")
_KEY_PASSWORD = re.compile(
    r"""(?P<head>(?<![\w.\-])[\w.\-]{0,40}?(?:password|passwd|pwd)["']?\s*[=:]\s*)"""
    r"""(?P<value>'(?:[^'\\]|\\.)*'?|"(?:[^"\\]|\\.)*"?|[^\s&;,'"()\[\]{}]+)""",
    re.IGNORECASE,
)


def mask_secrets(text: str) -> str:
    """``text`` with the passwords it shows replaced by ``***``: the password of a URL's
    userinfo and the value of a ``password=`` (``pwd=``, ``PGPASSWORD=``...) setting of a
    key=value DSN or a query string. The user name, host and the rest stay readable.

    >>> mask_secrets("postgresql://alice:s3cret@127.0.0.1:5432/test")
    'postgresql://alice:***@127.0.0.1:5432/test'
    >>> mask_secrets("host=db user=alice password='s 3' dbname=t")
    "host=db user=alice password='***' dbname=t"
    """
    text = _URL_PASSWORD.sub(r"\g<head>***", text)
    return _KEY_PASSWORD.sub(_masked_value, text)


def _masked_value(match: re.Match[str]) -> str:
    value = match["value"]
    quote = value[0] if value[0] in "'\"" else ""
    return f"{match['head']}{quote}***{quote}"


def _is_hidden(char: str) -> bool:
    point = ord(char)
    noncharacter = (point & 0xFFFE) == 0xFFFE or 0xFDD0 <= point <= 0xFDEF
    return noncharacter or unicodedata.category(char) in _HIDDEN


@functools.lru_cache(maxsize=8192)
def _escaped(char: str, keep: str, controls: bool = True) -> str:
    if char in keep:
        return char
    if not (_is_hidden(char) if controls else "\ud800" <= char <= "\udfff"):
        return char
    point = ord(char)
    if char in _SHORT:
        return _SHORT[char]
    if point < 0x100:
        return f"\\x{point:02x}"
    if point < 0x10000:
        return f"\\u{point:04x}"
    return f"\\U{point:08x}"


def escape(text: str, *, keep: str = "\n\t", controls: bool = True) -> str:
    """``text`` with each invisible character (control, format, line and paragraph separator,
    lone surrogate, noncharacter) but those in ``keep`` written as a visible escape; with
    ``controls`` false, only lone surrogates (which UTF-8 cannot encode).

    >>> escape("a\\x1b[31mb\\udc80")
    'a\\\\x1b[31mb\\\\udc80'
    """
    return _SUSPECT.sub(lambda m: _escaped(m[0], keep, controls), text)


def cut_marker(count: int) -> str:
    """What ends a string cut to its limit: `` ... [12,345 characters cut]``."""
    return f" ... [{count:,} characters cut]"


_RESERVE = len(cut_marker(10**15))  # room kept for the marker, so a cut text fits its limit


def clean(text: str, limit: int = LIMIT, *, keep: str = "\n\t", controls: bool = True) -> str:
    """``text`` masked, escaped (see :func:`escape`) and, when longer than ``limit``
    characters, cut to ``limit`` characters, marker included (so cleaning a cleaned text
    changes nothing).

    >>> clean("x" * 5000)[-30:]
    'xxx ... [1,043 characters cut]'
    """
    if not isinstance(text, str):
        text = str(text)
    window = text[: limit + _MARGIN]
    beyond = len(text) - len(window)
    masked = mask_secrets(window)
    out = escape(masked, keep=keep, controls=controls)
    if len(out) <= limit and not beyond:
        return out
    room = max(limit - _RESERVE, 0)
    cut = _cut_index(masked, room, keep, controls)
    if cut is None:
        return out + cut_marker(beyond)
    kept = escape(masked[:cut], keep=keep, controls=controls)
    return kept + cut_marker(len(masked) - cut + beyond)


def _cut_index(text: str, room: int, keep: str, controls: bool) -> int | None:
    """Where to cut ``text`` so that it escapes to at most ``room`` characters (None: all
    of it fits)."""
    size = pos = 0
    for match in _SUSPECT.finditer(text):
        if size + match.start() - pos > room:
            return pos + room - size
        size += match.start() - pos
        piece = len(_escaped(match[0], keep, controls))
        if size + piece > room:
            return match.start()
        size += piece
        pos = match.end()
    return pos + room - size if size + len(text) - pos > room else None


def clean_line(text: str, width: int = LIMIT) -> str:
    """``text`` as one line of at most ``width`` characters, for a table cell or a heading:
    its first line only (`` ...`` says more followed), tabs escaped too, cut with ``...``.

    >>> clean_line("history not linearizable\\n  partition 3: ...", 30)
    'history not linearizable ...'
    """
    if not isinstance(text, str):
        text = str(text)
    first, _newline, rest = text.partition("\n")
    line = clean(first, max(width, LIMIT), keep="")
    if rest.strip():
        line += " ..."
    if len(line) > width:
        line = line[: max(width - 3, 0)] + "..."
    return line


def clean_block(text: str, limit: int = BLOCK_LIMIT) -> str:
    """A multi-line text (a rendered trace, a script) cleaned line by line, each line to
    :data:`LIMIT` characters; past ``limit`` characters in all, the lines that do not fit
    are replaced by one marker line."""
    if not isinstance(text, str):
        text = str(text)
    lines: list[tuple[int, str]] = []  # (where the line starts in text, the line cleaned)
    size = start = 0
    while start <= len(text) and size <= limit:
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        lines.append((start, clean(text[start:end], keep="\t")))
        size += len(lines[-1][1]) + 1
        start = end + 1
    if size - 1 <= limit:
        return "\n".join(line for _start, line in lines)
    while lines and size - 1 > limit - _RESERVE:
        start, line = lines.pop()
        size -= len(line) + 1
    kept = [line for _start, line in lines]
    return "\n".join([*kept, cut_marker(len(text) - start).lstrip()])


def clean_value(text: str, limit: int = LIMIT) -> str:
    """``text`` for a data format (JSON): masked, cut, and lone surrogates escaped, but
    control characters kept (JSON writes them as ``\\u0001``; reading the file gives them
    back), so a loaded report renders as the written one did."""
    return clean(text, limit, keep="", controls=False)


def clean_data(data: Any) -> Any:
    """JSON-ready ``data`` with every string in it (keys too) cleaned by :func:`clean_value`,
    and numbers JSON cannot hold (``nan``, ``inf``) written as strings."""
    if isinstance(data, str):
        return clean_value(data)
    if isinstance(data, bool) or data is None or isinstance(data, int):
        return data
    if isinstance(data, float):
        return data if math.isfinite(data) else repr(data)
    if isinstance(data, dict):
        return {clean_value(str(k)): clean_data(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [clean_data(v) for v in data]
    return clean_value(repr(data))
