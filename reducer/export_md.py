"""A folded session as Markdown: the whole conversation, or what a filtered view shows.

:func:`export_markdown` reads state only (a :class:`~reducer.fold.Session`,
optionally a :class:`~reducer.filters.ViewFilter` and a time look-up) and
returns text: prompts as quotes, replies as they were written (they are
Markdown already; but an ``<`` outside code is written ``&lt;``, so HTML in a
reply reads as written and cannot change the export's own structure),
thinking, hook output and sub-agent transcripts in
``<details>`` blocks, tool inputs and results in code fences long enough never
to be closed by what they hold. Nothing is cut: every text the fold kept is in
the output. Control characters (other than tab and newline) are written as
``\\xNN`` so the file is safe to ``cat``. Pure: no Textual, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import tzinfo

from .filters import ViewFilter
from .item_time import format_clock
from .facts import call_duration, session_facts
from .costs import Cost, cost_text
from .format import WORDS, compact_count, format_duration, plural, title_text
from .safe import escaped
from .fold import Session
from .state import (
    MAIN,
    CompactionItem,
    HookItem,
    Item,
    NoticeItem,
    ProblemItem,
    PromptItem,
    StopSummaryItem,
    TextItem,
    ThinkingItem,
    ToolCall,
    ToolItem,
    TurnFooterItem,
)
from .tools import Bash, tool_from_use, tool_parts, tool_summary
from .turn_footer import turn_failure, turn_footer
from .queries import bash_result, input_json, result_text

__all__ = ["export_markdown", "MAX_DEPTH"]

MAX_DEPTH = 4
"""Sub-agent transcripts nested deeper than this are named, not written out."""

def _fence(body: str, lang: str = "") -> str:
    """``body`` in a code fence longer than any run of backticks inside it."""
    runs = [len(m) for m in re.findall(r"`+", body)]
    ticks = "`" * max(3, max(runs, default=0) + 1)
    return f"{ticks}{lang}\n{escaped(body.rstrip(chr(10)))}\n{ticks}"


def _quote(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in _md(text).split("\n"))


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)")


def _md(text: str) -> str:
    """Text from the transcript written as Markdown (a reply is Markdown already):
    its control characters as escapes, and every ``<`` outside code written
    ``&lt;``, so no HTML in it (``</details><details open>``) can change the
    export's own structure; it reads the same once rendered."""
    text = escaped(text)
    if "<" not in text:
        return text
    out: list[str] = []
    fence = ""
    for line in text.split("\n"):
        opening = _FENCE.match(line)
        if fence:
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence) \
                    and not line.strip().strip(fence[0]):
                fence = ""
            out.append(line)
        elif opening:
            fence = opening.group(1)
            out.append(line)
        else:
            out.append(_outside_code(line))
    return "\n".join(out)


def _outside_code(line: str) -> str:
    """``line`` with ``<`` written ``&lt;`` except inside its code spans."""
    parts: list[str] = []
    done = 0
    for span in _CODE_SPAN.finditer(line):
        parts.append(line[done:span.start()].replace("<", "&lt;"))
        parts.append(span.group())
        done = span.end()
    parts.append(line[done:].replace("<", "&lt;"))
    return "".join(parts)


def _inline(text: str) -> str:
    """One line of ``text`` as inline code."""
    one = " ".join(escaped(text).split())
    ticks = "`" * (max((len(m) for m in re.findall(r"`+", one)), default=0) + 1)
    pad = " " if one.startswith("`") or one.endswith("`") else ""
    return f"{ticks}{pad}{one}{pad}{ticks}" if one else ""


def _details(summary: str, body: str) -> str:
    return f"<details><summary>{_html(summary)}</summary>\n\n{body}\n\n</details>"


def _html(text: str) -> str:
    return escaped(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class _Writer:
    def __init__(self, session: Session, view_filter: ViewFilter,
                 time_of: Callable[[Item], float | None] | None, tz: tzinfo | None) -> None:
        self.session = session
        self.filter = view_filter
        self.time_of = time_of
        self.tz = tz
        self.written: set[str] = set()
        """Agents whose transcript is in the output (each once)."""

    def when(self, item: Item) -> str:
        if self.time_of is None:
            return ""
        t = self.time_of(item)
        return f" · {format_clock(t, self.tz)}" if t is not None else ""

    def agent(self, agent_id: str, depth: int) -> list[str]:
        agent = self.session.agents.get(agent_id)
        if agent is None or agent_id in self.written:
            return []
        self.written.add(agent_id)
        out: list[str] = []
        for item in agent.items:
            if not self.filter.accepts(item):
                continue
            block = self.item(item, depth)
            if block:
                out.append(block)
        return out

    def item(self, item: Item, depth: int) -> str:
        match item:
            case PromptItem():
                images = f" · {plural(item.images, 'image')}" \
                    if item.images else ""
                head = "you" if item.agent == MAIN else "prompt"
                level = "#" * min(2 + depth, 6)
                return f"{level} {head}{self.when(item)}{images}\n\n{_quote(item.text)}"
            case TextItem():
                return _md(item.text.strip("\n")) + self._stamp(item)
            case ThinkingItem():
                label = "thinking (redacted)" if item.redacted else "thinking"
                if item.tokens:
                    label += f" · {compact_count(item.tokens)} tokens"
                return _details(label + self.when(item), _md(item.text) or "(no text)")
            case ToolItem():
                return self.tool(item, depth)
            case HookItem():
                h = item.hook
                code = f" · exit {h.exit_code}" if h.exit_code is not None else ""
                head = f"⚓ hook {_inline(h.label)} · {h.status}{code}{self.when(item)}"
                parts = [(h.stdout, "stdout"), (h.stderr, "stderr")]
                if h.output.strip() and h.output.strip() not in (h.stdout.strip(),
                                                                 h.stderr.strip()):
                    parts.append((h.output, "output"))
                body = "\n\n".join(f"{name}:\n\n{_fence(text)}" for text, name in parts
                                   if text.strip())
                return _details(head, body) if body else f"- {head}"
            case StopSummaryItem():
                cmds = [str(i.get("command", "")) for i in item.infos if isinstance(i, dict)]
                lines = [f"- stop hooks: {item.count}"
                         + (" · prevented continuation" if item.prevented else "")
                         + (f" · {_md(item.stop_reason)}" if item.stop_reason else "")]
                lines += [f"  - {_inline(c)}" for c in cmds if c]
                lines += [f"  - error: {_md(str(e))}" for e in item.errors]
                return "\n".join(lines)
            case NoticeItem():
                text = f"[{item.category}] {item.text}"
                if item.level != "info":
                    text = f"{item.level}: {text}"
                out = _quote(text + self.when(item))
                if item.detail:
                    out += "\n\n" + _fence(item.detail)
                return out
            case CompactionItem():
                if item.failed:
                    head = f"compaction failed: {item.error or 'unknown error'}"
                else:
                    head = f"compacted ({item.trigger or 'auto'})"
                    if item.pre_tokens is not None:
                        head += f" · {compact_count(item.pre_tokens)} tokens before"
                    if item.post_tokens is not None:
                        head += f" · {compact_count(item.post_tokens)} after"
                out = f"---\n\n*{_md(head)}{self.when(item)}*"
                if item.summary:
                    out += "\n\n" + _details("summary", _md(item.summary))
                return out + "\n\n---"
            case TurnFooterItem():
                return self.footer(item)
            case ProblemItem():
                return _quote(f"⚠ line {item.line_no}: {item.problem} {item.kind_key}: "
                              f"{item.reason}")
            case _:
                return _quote(f"[{item.kind}]")

    def _stamp(self, item: Item) -> str:
        when = self.when(item)
        return f"\n\n<sub>{when.removeprefix(' · ')}</sub>" if when else ""

    def tool(self, item: ToolItem, depth: int) -> str:
        call = item.call
        tool = tool_from_use(call.name, call.input)
        name, summary = tool_parts(tool)
        if name != call.name:  # a command's call: the whole summary follows its name
            summary = tool_summary(tool)
        status = call.status  # the six call statuses are their own words (widgets.status_glyphs)
        extra = ""
        took = call_duration(call)
        if took:
            extra = f" · {format_duration(took)}"
        if call.background:
            extra += " · background"
        head = f"**{_md(call.name)}**" + (f" {_inline(summary)}" if summary else "")
        lines = [f"- {head} — {status}{extra}{self.when(item)}"]
        body: list[str] = []
        if isinstance(tool, Bash):
            body.append(_fence(tool.command, "bash"))
        elif call.input not in (None, {}, ""):
            body.append(_fence(input_json(call.input), "json"))
        if call.denied_reason:
            body.append(f"denied: {_md(call.denied_reason)}")
        bash = bash_result(call) if call.name == "Bash" else None
        if bash is not None:
            if bash.stdout:
                body.append(_fence(bash.stdout))
            if bash.stderr:
                body.append("stderr:\n\n" + _fence(bash.stderr))
        else:
            text = result_text(call)
            if text:
                body.append(("error:\n\n" if call.is_error else "") + _fence(text))
        if call.subagent:
            body.append(self.subagent(call, depth))
        if body:
            lines.append("")
            lines.append(_indent("\n\n".join(body)))
        return "\n".join(lines)

    def subagent(self, call: ToolCall, depth: int) -> str:
        agent = self.session.agents.get(call.subagent or "")
        if agent is None:
            return "sub-agent: (no transcript)"
        label = agent.description or agent.subagent_type or agent.id
        kind = agent.subagent_type or "agent"
        head = f"sub-agent {kind}: {label} · {plural(agent.tool_calls, WORDS['tool_calls'])} · {agent.status}"
        if depth + 1 > MAX_DEPTH:
            return f"{_html(head)} (nested too deep to write out)"
        blocks = self.agent(agent.id, depth + 1)
        return _details(head, "\n\n".join(blocks) if blocks else "(nothing shown)")

    def footer(self, item: TurnFooterItem) -> str:
        t = item.turn_ref
        parts = turn_footer(t, api_time=False, calls=WORDS["tool_calls"])
        failure = turn_failure(t)
        if failure is not None:
            parts.append(f"failed: {failure}")
        out = f"*{_md(' · '.join(parts))}*"
        for err in t.errors:
            out += "\n\n" + _fence(err)
        return out


def _indent(text: str) -> str:
    return "\n".join(f"  {line}" if line else "" for line in text.split("\n"))


def _header(session: Session, agent_id: str, view_filter: ViewFilter) -> list[str]:
    figures = session_facts(session)
    lines = [f"# {_md(title_text(figures.title))}", ""]
    facts: list[str] = []
    if session.session_id:
        facts.append(f"session {_inline(session.session_id)}")
    if session.model:
        facts.append(_md(session.model))
    if session.cwd:
        facts.append(_inline(session.cwd))
    if session.git_branch:
        facts.append(f"branch {_inline(session.git_branch)}")
    facts += [figures.state, plural(figures.turns, WORDS["turns"]),
              plural(figures.prompts, WORDS["prompts"]),
              plural(figures.tool_calls.total, WORDS["tool_calls"])]
    if figures.subagents:
        facts.append(plural(figures.subagents, WORDS["subagents"]))
    if figures.cost_usd is not None:
        facts.append(cost_text(Cost(figures.cost_usd, figures.cost_source)))
    used = figures.tokens
    facts.append(f"{WORDS['in']} {compact_count(used.total_in)}"
                 f" {WORDS['out']} {compact_count(used.output)} tokens")
    lines.append(" · ".join(facts))
    if agent_id != MAIN:
        agent = session.agents.get(agent_id)
        label = (agent.description or agent.subagent_type or agent_id) if agent else agent_id
        lines += ["", f"Sub-agent transcript: {_md(label)}"]
    if view_filter.active:
        lines += ["", f"*Filtered view: {_md(view_filter.describe())}.*"]
    return lines


def export_markdown(session: Session, *, agent_id: str = MAIN,
                    view_filter: ViewFilter | None = None,
                    time_of: Callable[[Item], float | None] | None = None,
                    tz: tzinfo | None = None) -> str:
    """The transcript of ``agent_id`` (the main conversation by default) as
    Markdown, leaving out what ``view_filter`` hides; ``time_of`` (e.g.
    :meth:`reducer.item_time.ItemTimes.of`) adds each item's time, shown in ``tz``
    (local time by default)."""
    view_filter = view_filter or ViewFilter()
    writer = _Writer(session, view_filter, time_of, tz)
    lines = _header(session, agent_id, view_filter)
    blocks = writer.agent(agent_id, 0)
    if agent_id == MAIN:
        # transcripts no call of the session leads to (a sub-agent file opened alone,
        # teammates): after the main one, so nothing is left out
        for other in list(session.agents.values()):
            if other.id in writer.written or not other.items:
                continue
            inner = writer.agent(other.id, 1)
            if inner:
                label = other.description or other.subagent_type or other.id
                blocks.append(f"## transcript of {_md(other.subagent_type or 'agent')}: "
                              f"{_md(label)}")
                blocks += inner
    out = "\n".join(lines) + "\n\n" + "\n\n".join(blocks)
    return out.rstrip("\n") + "\n"
