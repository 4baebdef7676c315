"""Canonical tool invocations built from ``tool_use`` blocks.

A ``tool_use`` content block carries a tool ``name`` and its ``input`` object.
:func:`tool_from_use` turns that pair into a :data:`Tool`: a typed variant
(:class:`Read`, :class:`Write`, :class:`Edit`, :class:`MultiEdit`,
:class:`Bash`, :class:`Command`) when the input fits that variant's schema
exactly, and :class:`Raw` otherwise (MCP tools, every other tool, and any input
with an unknown key, a missing key or a value of the wrong type).

The mapping is lossless: ``tool_to_use(tool_from_use(name, input)) == (name,
input)`` for every input, because optional keys that were absent stay absent
(they are held as :data:`msgspec.UNSET`, never as a default value), and a typed
variant is only chosen after checking that it maps back to an equal input.
Key order inside the input dict is not preserved for typed variants (it comes
back in field order); JSON object order carries no meaning.

A :class:`Command` is a slash command the user ran at the harness (``/compact``,
``/release 1.2``), not a model tool call. Its canonical name is the command
itself, leading ``/`` included; no model-facing tool name starts with ``/``, so
the name alone identifies it. Its canonical input is ``{"args": ...}`` or ``{}``.
Model-facing tools that invoke commands (``Skill``, ``SlashCommand``) are
ordinary tools and stay :class:`Raw`.
"""

from __future__ import annotations

from typing import Any, TypeAlias

import msgspec
from msgspec import UNSET, UnsetType

from .format import plural

__all__ = [
    "Bash",
    "Command",
    "Edit",
    "EditOp",
    "MultiEdit",
    "Raw",
    "Read",
    "Tool",
    "Write",
    "edit_hunks",
    "tool_from_use",
    "tool_summary",
    "tool_parts",
    "tool_to_use",
]


class _Args(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """Base for typed argument sets: exact key set, UNSET fields left out on the way back."""


class Read(_Args):
    """``Read``: a file, optionally a line window (``offset``/``limit``) or PDF ``pages``."""

    file_path: str
    offset: int | UnsetType = UNSET
    limit: int | UnsetType = UNSET
    pages: str | UnsetType = UNSET


class Write(_Args):
    """``Write``: replace a file's whole content."""

    file_path: str
    content: str


class Edit(_Args):
    """``Edit``: replace ``old_string`` with ``new_string`` in a file."""

    file_path: str
    old_string: str
    new_string: str
    replace_all: bool | UnsetType = UNSET


class EditOp(_Args):
    """One replacement inside a :class:`MultiEdit`."""

    old_string: str
    new_string: str
    replace_all: bool | UnsetType = UNSET


class MultiEdit(_Args):
    """``MultiEdit``: several replacements applied in order to one file."""

    file_path: str
    edits: list[EditOp]


class Bash(_Args):
    """``Bash``: a shell command (``timeout`` in milliseconds)."""

    command: str
    description: str | UnsetType = UNSET
    timeout: int | float | UnsetType = UNSET
    run_in_background: bool | UnsetType = UNSET
    dangerouslyDisableSandbox: bool | UnsetType = UNSET


class Command(msgspec.Struct, frozen=True, omit_defaults=True):
    """A slash command run at the harness, e.g. ``command="/release"``, ``args="1.2"``."""

    command: str
    """Canonical name including the leading slash."""
    args: str | UnsetType = UNSET
    """Everything typed after the command name, when any."""


class Raw(msgspec.Struct, frozen=True):
    """Any tool without a typed variant, or whose input did not fit one; input untouched."""

    name: str
    input: Any


Tool: TypeAlias = Read | Write | Edit | MultiEdit | Bash | Command | Raw
"""A canonical tool invocation."""

_TYPED: dict[str, type[_Args]] = {
    "Read": Read,
    "Write": Write,
    "Edit": Edit,
    "MultiEdit": MultiEdit,
    "Bash": Bash,
}
_NAMES: dict[type, str] = {cls: name for name, cls in _TYPED.items()}


class _CommandInput(_Args):
    args: str | UnsetType = UNSET


def tool_from_use(name: str, input: object) -> Tool:
    """Build the canonical :data:`Tool` for a ``tool_use`` block's ``name`` and ``input``.

    A typed variant is returned only when ``input`` is a dict that fits its
    schema exactly; anything else becomes :class:`Raw` holding ``input`` as is.
    """
    if not isinstance(input, dict) or not isinstance(name, str):
        return Raw(name, input)
    tool: Tool
    try:
        if name in _TYPED:
            tool = msgspec.convert(input, _TYPED[name])
        elif len(name) > 1 and name[0] == "/":
            tool = Command(name, msgspec.convert(input, _CommandInput).args)
        else:
            return Raw(name, input)
    except msgspec.ValidationError:
        return Raw(name, input)
    # Belt and braces: only keep the typed form if it maps back to the same input.
    if tool_to_use(tool) != (name, input):
        return Raw(name, input)
    return tool


def tool_to_use(tool: Tool) -> tuple[str, object]:
    """Inverse of :func:`tool_from_use`: the tool name and input dict for ``tool``."""
    if isinstance(tool, Raw):
        return tool.name, tool.input
    if isinstance(tool, Command):
        return tool.command, ({} if tool.args is UNSET else {"args": tool.args})
    return _NAMES[type(tool)], msgspec.to_builtins(tool)


# Line breaks and other control characters (ESC, ...) never reach a one-line summary.
_FLAT: dict[int, str] = {c: "\N{REPLACEMENT CHARACTER}" for c in [*range(0x20), *range(0x7F, 0xA0)]}
_FLAT.update({c: "\N{RETURN SYMBOL}" for c in (0x0A, 0x0D, 0x2028, 0x2029)})
_FLAT[0x09] = " "


def _one_line(text: str, limit: int = 120) -> str:
    """First non-blank line of ``text``, with `` …`` when anything was dropped."""
    lines = [ln.strip() for ln in text.strip().splitlines()]
    first = lines[0] if lines else ""
    more = len(lines) > 1
    if len(first) > limit:
        first, more = first[: limit - 1].rstrip(), True
    return first + " …" if more else first


def _raw_hint(input: object) -> str:
    """A short hint for a Raw tool: its first non-empty string argument."""
    if isinstance(input, dict):
        for value in input.values():
            if isinstance(value, str) and value.strip():
                return _one_line(value, 80)
    return ""


def tool_summary(tool: Tool) -> str:
    """A one-line human summary, e.g. ``Bash: ls -la``, ``Edit a/b.py``, ``Read f.py:10-60``."""
    name, sep, detail = _parts(tool)
    return (f"{name}{sep}{detail}" if detail else name).translate(_FLAT)


def tool_parts(tool: Tool) -> tuple[str, str]:
    """:func:`tool_summary` in two: the tool's name and what follows it
    (``("Bash", "ls -la")``; ``""`` when the name is all there is)."""
    name, _sep, detail = _parts(tool)
    return name.translate(_FLAT), detail.translate(_FLAT)


def _parts(tool: Tool) -> tuple[str, str, str]:
    """The name, the separator after it and the detail of :func:`tool_summary`."""
    match tool:
        case Bash(command=command):
            return "Bash", ": ", _one_line(command)
        case Read(file_path=path, offset=offset, limit=limit, pages=pages):
            where = path
            if offset is not UNSET or limit is not UNSET:
                start = 1 if offset is UNSET else offset
                end = "" if limit is UNSET else str(start + limit - 1)
                where = f"{path}:{start}-{end}"
            if pages is not UNSET:
                where = f"{where} pages {pages}"
            return "Read", " ", where
        case Write(file_path=path, content=content):
            n = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
            return "Write", " ", f"{path} ({plural(n, 'line')})"
        case Edit(file_path=path, replace_all=replace_all):
            return "Edit", " ", path + (" (all)" if replace_all is True else "")
        case MultiEdit(file_path=path, edits=edits):
            return "MultiEdit", " ", f"{path} ({plural(len(edits), 'edit')})"
        case Command(command=command, args=args):
            return command, " ", "" if args is UNSET or not args.strip() else _one_line(args)
        case Raw(name=name, input=input):
            return name, ": ", _raw_hint(input)
    raise TypeError(f"not a Tool: {tool!r}")


def edit_hunks(tool: Tool) -> list[tuple[str, str]]:
    """The ``(old, new)`` string pairs of an :class:`Edit` or :class:`MultiEdit`, in order.

    Any other tool has no hunks and gives ``[]``.
    """
    if isinstance(tool, Edit):
        return [(tool.old_string, tool.new_string)]
    if isinstance(tool, MultiEdit):
        return [(op.old_string, op.new_string) for op in tool.edits]
    return []
