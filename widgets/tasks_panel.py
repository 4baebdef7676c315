"""The tasks panel: sub-agents, background shells, monitors and workflows.

Rows are read from :attr:`Session.tasks <reducer.fold.Session.tasks>` and
:attr:`Session.agents <reducer.fold.Session.agents>` (a sub-agent's task and
its transcript are one row), running ones first. The list is an
:class:`~textual.widgets.OptionList`; updates replace rows in place, so the
highlighted row and the scroll position survive every refresh.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.content import Content
from textual.message import Message
from textual.widget import Widget
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from cctv.reducer.format import compact_count, format_duration, plural, short_path
from cctv.reducer.fold import Session
from cctv.reducer.state import Change

from .home import home
from .status_glyphs import STATUSES, css
from .task_rows import TaskRow, TaskRowCache, task_rows

__all__ = ["TasksPanel", "TaskRow", "task_rows"]

def _glyph(status: str | None) -> tuple[str, str]:
    """(glyph, Textual style) of a status; nothing for none (a workflow's phase heading)."""
    if status is None:
        return ("", "")
    st = STATUSES[status]
    return st.glyph, css(st.role, st.bold)


# --- drawing -------------------------------------------------------------------------------

def _usage_text(row: TaskRow) -> str:
    parts = []
    if row.tokens:
        parts.append(f"{compact_count(row.tokens)} {'out' if row.tokens_are_output else 'tok'}")
    if row.tool_uses:
        parts.append(plural(row.tool_uses, "tool"))
    if row.cost:
        parts.append(row.cost)
    return " · ".join(parts)


WIDE = 90
"""From this width on a row is one line of columns; below it, a title line and a meta line."""


def _cell(text: str | Content, width: int, style: str = "", right: bool = False) -> Content:
    content = text if isinstance(text, Content) else Content.styled(text, style)
    content = content.truncate(width, ellipsis=True)
    gap = width - content.cell_length
    return content.pad_left(gap) if right else content.pad_right(gap)


def _title(row: TaskRow) -> Content:
    return Content.assemble(
        "  " * row.depth,
        ("↳ " if row.depth else "", "$text-muted"),
        (row.description, "bold" if row.running else ""),
    )


def render_row(row: TaskRow, width: int) -> Content:
    """The lines of one row, each exactly ``width`` cells wide.

    Wide: ``◐ agent    description · type   12s  Read   1.2k tok · 2 tools``.
    Narrow (a side panel): the description and elapsed time, then a muted line
    with the kind, sub-agent type, last tool and usage. Then, when known, the
    workflow's phases, the current step (running rows), the error, the summary
    (finished rows) and the output file."""
    glyph, glyph_style = _glyph(row.status)
    elapsed = format_duration(row.elapsed)
    elapsed_style = "$text-warning" if row.running else "$text-muted"
    indent = "  " * row.depth
    usage = _usage_text(row)
    lines: list[Content] = []
    if width >= WIDE:
        kind_w, elapsed_w, tool_w = 9, 8, 14
        usage_w = 30 if width >= 110 else 22  # (room for a cost beside tokens and tools)
        desc_w = width - 2 - kind_w - elapsed_w - tool_w - usage_w
        desc = Content.assemble(
            _title(row),
            (f" · {row.subagent_type}" if row.subagent_type else "", "$text-muted"),
        )
        lines.append(Content.assemble(
            (glyph, glyph_style), " ",
            _cell(row.kind_label, kind_w - 1, "$text-secondary"), " ",
            _cell(desc, desc_w - 1), " ",
            _cell(elapsed, elapsed_w - 2, elapsed_style, right=True), "  ",
            _cell(row.last_tool or "", tool_w - 1), " ",
            _cell(usage, usage_w, "$text-muted", right=True),
        ))
        pad = " " * (2 + kind_w) + indent
    else:
        elapsed_w = len(elapsed) + 1 if elapsed else 0
        lines.append(Content.assemble(
            (glyph, glyph_style), " ",
            _cell(_title(row), max(1, width - 2 - elapsed_w)),
            _cell(elapsed, elapsed_w, elapsed_style, right=True),
        ))
        pad = "  " + indent + ("  " if row.depth else "")
        meta = " · ".join(x for x in (row.kind_label, row.subagent_type, row.last_tool, usage)
                          if x)
        lines.append(Content.assemble(pad, _cell(meta, max(1, width - len(pad)),
                                                 "$text-muted")))
    for phase in row.phases:
        g, g_style = _glyph(phase.status)
        extra = "  ".join(x for x in (format_duration(phase.elapsed),
                                      f"{compact_count(phase.tokens)} tok" if phase.tokens
                                      else "") if x)
        lines.append(Content.assemble(
            pad, "  " * (phase.depth - 1),
            (f"{g} " if g else "", g_style),
            (phase.label, "" if g else "italic $text-secondary"),
            (f"  {extra}" if extra else "", "$text-muted"),
        ))
    if row.activity and row.running and row.activity != row.description:
        lines.append(Content.assemble(pad, ("⋯ " + row.activity,
                                            "italic $text-warning")))
    if row.error:
        failed = STATUSES["failed"]
        lines.append(Content.assemble(pad, (f"{failed.glyph} {row.error}", css(failed.role))))
    if row.summary and not row.running and row.summary != row.description:
        lines.append(Content.assemble(pad, (row.summary, "$text-muted")))
    if row.output_file:
        room = max(8, width - len(pad) - len("output "))
        lines.append(Content.assemble(
            pad, ("output ", "$text-muted"),
            (short_path(row.output_file, room, home()), "italic $text-muted"),
        ))
    return Content("\n").join(line.truncate(width, ellipsis=True, pad=True) for line in lines)


def _heading(text: str, count: int, width: int) -> Content:
    return Content.assemble((text, "bold $text-primary"), (f" · {count}", "$text-muted")) \
        .truncate(width, pad=True)


class TasksPanel(Widget):
    """Sub-agents, background shells, monitors and workflows, running ones first.

    Fed by :meth:`update_state`; hidden with the ``-hidden`` class (see
    :meth:`toggle`). Enter on a sub-agent row posts :class:`TasksPanel.OpenAgent`.
    """

    BINDING_GROUP_TITLE = "Tasks"

    HELP = """
    | Key(s) | Description |
    | :- | :- |
    | up/down, pgup/pgdn, home/end | Move the highlight (the list's own keys). |
    | enter, click | Open the highlighted sub-agent's transcript, or the task's output file. |
    """

    DEFAULT_CSS = """
    TasksPanel {
        height: 1fr;
        layout: vertical;
        background: $surface;
        &.-hidden { display: none; }
        & > #tasks-title {
            height: 1;
            padding: 0 1;
            background: $panel;
            color: $text-muted;
        }
        &:focus-within > #tasks-title { background: $primary-muted; }
        & > OptionList {
            height: 1fr;
            border: none;
            padding: 0 0 0 1;
            background: $surface;
            scrollbar-gutter: stable;
            /* a tint rather than a solid bar, so the status colours stay readable */
            & > .option-list--option-highlighted {
                background: $block-cursor-blurred-background;
                color: $foreground;
                text-style: none;
            }
            &:focus > .option-list--option-highlighted {
                background: $primary-muted;
                color: $foreground;
                text-style: none;
            }
        }
    }
    """

    class OpenAgent(Message):
        """Enter (or a click) on a sub-agent row: show that sub-agent's transcript."""

        def __init__(self, panel: TasksPanel, agent_id: str) -> None:
            super().__init__()
            self.panel = panel
            self.agent_id = agent_id
            """The sub-agent's id (the tool_use id of the call that started it)."""

        @property
        def control(self) -> TasksPanel:
            return self.panel

    class OpenOutput(Message):
        """Enter on a task row that is not a sub-agent: show what the task wrote."""

        def __init__(self, panel: TasksPanel, row: TaskRow) -> None:
            super().__init__()
            self.panel = panel
            self.row = row
            """The row (its ``output_file`` may be ``None``: the task named none)."""

        @property
        def control(self) -> TasksPanel:
            return self.panel

    def __init__(self, *, name: str | None = None, id: str | None = None,
                 classes: str | None = None, disabled: bool = False) -> None:
        super().__init__(name=name, id=id, classes=classes, disabled=disabled)
        self._cache = TaskRowCache()
        self._rows: list[TaskRow] = []
        self._ids: list[str] = []
        self._width = 0
        self._changed: set[str] = set()
        self._moved = True
        self._prompts: dict[tuple[TaskRow, int], Content] = {}
        """Each row drawn, by (row, width): a full redraw (a replay seek: a new
        session) draws only the rows that differ, and the list measures each
        prompt once (a Content keeps its height)."""

    def compose(self) -> ComposeResult:
        yield Static(self._title_text(), id="tasks-title")
        yield OptionList(compact=True, id="tasks-list")

    def _title_text(self) -> Content:
        running = self._cache.running
        finished = len(self._rows) - running
        return Content.assemble(
            ("Tasks", "bold $text-primary"),
            (f"  {running} running · {finished} finished" if self._rows else "", "$text-muted"),
        )

    # --- public -----------------------------------------------------------------------------

    @property
    def rows(self) -> list[TaskRow]:
        """The rows shown now, in order."""
        return list(self._rows)

    @property
    def option_list(self) -> OptionList:
        return self.query_one("#tasks-list", OptionList)

    def note_changes(self, session: Session, changes: list[Change]) -> None:
        """The change records a batch folded into ``session`` returned: the rows
        they touch are rebuilt at the next :meth:`update_state` (while the panel
        is hidden nothing is kept: showing it rebuilds every row once)."""
        if self.has_class("-hidden"):
            self._cache.invalidate()
        else:
            self._cache.note(session, changes)

    def update_state(self, session: Session, now: float | None = None) -> None:
        """Re-read the session's tasks and sub-agents; ``now`` (epoch seconds,
        the clock ``received_at`` used) makes running elapsed times live.

        Only the rows :meth:`note_changes` marked, and the running ones, are
        rebuilt and redrawn; a row that appears, goes or moves redraws the list."""
        changed, moved = self._cache.refresh(session, now)
        self._rows = self._cache.rows
        self._changed |= changed
        self._moved |= moved
        if self.is_mounted:
            self.query_one("#tasks-title", Static).update(self._title_text())
        self._show()

    def focus(self, scroll_visible: bool = True) -> TasksPanel:
        """Focus the list inside (so the arrow keys and enter work)."""
        if self.is_mounted:
            self.option_list.focus(scroll_visible)
        return self

    def toggle(self, show: bool | None = None) -> bool:
        """Show or hide the panel (the ``-hidden`` class); returns whether it is shown."""
        shown = self.has_class("-hidden") if show is None else show
        self.set_class(not shown, "-hidden")
        return shown

    # --- drawing ----------------------------------------------------------------------------

    def _entries(self, width: int) -> Iterable[tuple[str, Any, Any]]:
        running = [r for r in self._rows if r.running]
        finished = [r for r in self._rows if not r.running]
        if not self._rows:
            yield "empty", ("empty", width), lambda: Content.styled(
                "No sub-agents or background tasks yet.", "italic $text-muted")
            return
        for title, group, hid in (("Running", running, "hdr:running"),
                                  ("Finished", finished, "hdr:finished")):
            if not group:
                continue
            yield hid, (title, len(group), width), (
                lambda t=title, n=len(group): _heading(t, n, width))
            for row in group:
                yield row.key, (row, width), (lambda r=row: self._prompt(r, width))

    def _prompt(self, row: TaskRow, width: int) -> Content:
        key = (row, width)
        prompt = self._prompts.get(key)
        if prompt is None:
            if len(self._prompts) > 4 * len(self._rows) + 64:  # rows that are gone
                self._prompts.clear()
            prompt = self._prompts[key] = render_row(row, width)
        return prompt

    def _show(self) -> None:
        if not self.is_mounted:
            return
        ol = self.option_list
        width = ol.scrollable_content_region.width
        if width <= 0:
            self.call_after_refresh(self._show_if_sized)
            return
        if not self._moved and width == self._width:
            for key in self._changed:
                row = self._cache.row(key)
                if row is not None:
                    ol.replace_option_prompt(key, self._prompt(row, width))
            self._changed = set()
            return
        self._changed = set()
        self._moved = False
        self._width = width
        entries = list(self._entries(width))
        ids = [e[0] for e in entries]
        highlighted = ol.highlighted_option
        old_id = highlighted.id if highlighted is not None else None
        old_index = ol.highlighted
        scroll_y = ol.scroll_y
        options = [Option(make(), id=oid, disabled=self._cache.row(oid) is None)
                   for oid, _key, make in entries]
        ol.set_options(options)
        self._ids = ids
        ol.scroll_to(y=scroll_y, animate=False, immediate=True)
        selectable = [i for i, o in enumerate(options) if not o.disabled]
        if not selectable:
            return
        if old_id in ids and not options[ids.index(old_id)].disabled:
            target = ids.index(old_id)
        elif old_index is not None:
            target = min(selectable, key=lambda i: (abs(i - old_index), i))
        else:
            target = selectable[0]
        ol.highlighted = target

    def _show_if_sized(self) -> None:
        if self.is_mounted and self.option_list.scrollable_content_region.width > 0:
            self._show()

    def on_resize(self) -> None:
        self.call_after_refresh(self._show_if_sized)

    @on(OptionList.OptionSelected, "#tasks-list")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        row = self._cache.row(event.option.id or "")
        if row is None:  # a heading
            return
        if row.agent_id is not None:
            self.post_message(self.OpenAgent(self, row.agent_id))
        else:
            self.post_message(self.OpenOutput(self, row))

    @on(OptionList.OptionHighlighted, "#tasks-list")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
