"""Messages: assistant blocks, user prompts, streamed partial messages.

An assistant frame's blocks become text, thinking and tool-call items (merged
with the items its stream events drew); a user frame is a tool result, a
human prompt that opens a turn, or a notice the CLI wrote itself.
"""

from __future__ import annotations

import re
from typing import Any

from .. import frames as F
from ..state import MAIN, Item, PromptItem, TextItem, ThinkingItem, ToolCall
from .calls import Calls
from .core import Core
from .info import Info
from .notices import Notices
from .tasks import Tasks
from .turns import Turns
from .usage import Usage
from .values import as_text, block_text

__all__ = ["Messages", "NON_PROMPT_MARKERS"]

NON_PROMPT_MARKERS = (
    "<local-command-stdout>", "<local-command-stderr>", "<session-start-hook>",
    "<system-reminder>", "[Request interrupted by user", "<ide_opened_file>",
    "<ide_selection>", "<command-message>", "<user-prompt-submit-hook>", "<task-notification>",
    "<bash-input>", "<bash-stdout>", "<bash-stderr>", "<local-command-caveat>",
)
"""User-text prefixes the CLI writes itself: shown as notices, they open no turn."""

_FINAL_STOPS = frozenset({"end_turn", "stop_sequence", "max_tokens", "refusal"})
_COMMAND_HEADS = ("<command-name>", "<command-message>")
_OUTPUT_HEADS = ("<local-command-stdout>", "<local-command-stderr>")
_TYPED_COMMAND = re.compile(r"/[A-Za-z][\w:.-]*(?:\s|$)")
"""A prompt typed as a slash command (``/compact``, ``/review 12``): a stream's echo
of it carries no ``<command-name>`` tags. Its turn is numbered once the model answers."""
_TASK_NOTE = re.compile(r"<(task-id|tool-use-id|output-file|status|summary)>(.*?)</\1>", re.S)


class Messages:
    """Assistant, user and stream_event frames: what they say goes to the
    turns, calls, tasks and usage they name."""

    def __init__(self, core: Core, info: Info, turns: Turns, usage: Usage, calls: Calls,
                 tasks: Tasks, notices: Notices) -> None:
        self._core = core
        self._notices = notices
        self._info = info
        self._turns = turns
        self._usage = usage
        self._calls = calls
        self._tasks = tasks
        self._streaming: dict[tuple[str, str], list[Item]] = {}
        """(agent, message id) → the items its stream events drew, not yet
        replaced by the complete message."""
        self._stream_blocks: dict[tuple[str, int], Item] = {}
        """(agent, content block index) → the item that block streams into."""
        self._stream_msg = ""
        """The id of the message streaming now (from its ``message_start``)."""

    # --- assistant ---------------------------------------------------------------------

    def on_assistant(self, e: F.Assistant, agent_id: str) -> None:
        core = self._core
        agent = core.agent_for(agent_id)
        msg = e.message
        if agent_id == MAIN:
            turns = self._turns
            turn = turns.ensure_turn(e.line_no)
            turn.answered = True
            if turn.number is None and msg.model != "<synthetic>":
                turns.number(turn)  # the model answered (not the CLI's own words)
            if turns.status != "compacting":
                # a final stop reason (on-disk rows carry it) means the model is done
                turns.status = "idle" if msg.stop_reason in _FINAL_STOPS else "requesting"
            if msg.model and msg.model != "<synthetic>":
                self._info.model = self._info.model or msg.model
        turn = core.turn_index()
        if e.supersedes:
            for uuid in e.supersedes:
                for item in core.uuid_items(uuid):
                    item.hidden = True
                    core.touch(item)
        # usage: once per (message id, request id), the latest frame's figures
        if msg.usage is not None and msg.id:
            self._usage.assistant(agent, agent_id == MAIN, (msg.id, e.request_id or e.requestId),
                                  msg.usage, msg.model, e.timestamp,
                                  -1 if turn is None else turn)
        mkey = (agent_id, msg.id)
        streamed = self._streaming.get(mkey)
        api_error = bool(e.error or e.isApiErrorMessage)
        for block in msg.content:
            btype = block.type
            if btype == "text":
                if api_error:
                    continue  # the CLI's words, not a reply: the error notice below says them
                item = _take_streamed(streamed, TextItem) if streamed else None
                if item is not None:
                    item.text = block.text or ""
                    item.streaming = False
                    item.line_no = e.line_no
                    item.source = core.source
                    item.uuid = e.uuid
                    core.index_uuid(e.uuid or "", item)
                    core.touch(item)
                else:
                    item = core.add(TextItem(agent_id, e.line_no, turn, e.uuid,
                                             text=block.text or "", message_id=msg.id))
            elif btype in ("thinking", "redacted_thinking"):
                text = block.thinking or ""
                redacted = btype == "redacted_thinking" or not text
                tokens = self._turns.take_thinking()
                item = _take_streamed(streamed, ThinkingItem) if streamed else None
                if item is not None:
                    item.text = text or item.text
                    item.redacted = redacted and not item.text
                    item.tokens = tokens or item.tokens
                    item.streaming = False
                    item.line_no = e.line_no
                    item.source = core.source
                    core.touch(item)
                else:
                    item = core.add(ThinkingItem(agent_id, e.line_no, turn, e.uuid, text=text,
                                                 redacted=redacted, tokens=tokens,
                                                 message_id=msg.id))
            elif btype in ("tool_use", "server_tool_use"):
                item = self._calls.tool_use(agent, block, e, turn)
            else:
                label = btype or "block"
                item = core.notice(agent_id, e.line_no, "content", f"[{label}]")
                item.uuid = e.uuid
        if streamed is not None and not streamed:
            del self._streaming[mkey]
        if api_error:
            text = block_text(msg.content) or str(e.error)
            if e.error == "rate_limit" and agent_id == MAIN:
                self._notices.rate_limit_error(e.line_no, text)
            core.notice(agent_id, e.line_no, "api error", f"API error: {e.error or ''} {text}".strip(),
                        level="error")
        if e.aborted:
            core.notice(agent_id, e.line_no, "interrupted", "response cut short by an interrupt",
                        level="warning")

    # --- user --------------------------------------------------------------------------

    def on_user(self, e: F.User, agent_id: str) -> None:
        content = e.message.content
        results = [b for b in content if b.type == "tool_result"] if isinstance(content, list) else []
        if results:
            payload = e.result_payload
            calls = self._calls
            for block in results:
                calls.tool_result(block, payload if len(results) == 1 else None, e, agent_id)
                if agent_id == MAIN and block.tool_use_id:
                    self._answered_by_call(calls.calls[block.tool_use_id])
            return
        ide: tuple[str, ...] = ()
        if isinstance(content, list) and agent_id == MAIN:
            ide, typed = _ide_context(content)
            if ide and typed:
                content = typed
        text = block_text(content)
        images = tuple(b.source for b in content if b.type == "image") \
            if isinstance(content, list) else ()
        turns = self._turns
        if turns.compaction_summary(e, text):
            return
        core = self._core
        stripped = text.lstrip()
        if agent_id != MAIN:
            agent = core.agent_for(agent_id)
            first = agent.items[0] if len(agent.items) == 1 else None
            if not agent.items and not e.synthetic:
                core.add(PromptItem(agent_id, e.line_no, None, e.uuid, text=text, images=images))
            elif type(first) is PromptItem and first.uuid is None and first.text == text:
                # the prompt its task_started said: this frame is where it is written
                first.line_no, first.uuid, first.source, first.images = \
                    e.line_no, e.uuid, core.source, images
                if e.uuid:
                    core.index_uuid(e.uuid, first)
                core.touch(first)
            else:
                core.notice(agent_id, e.line_no, "message", text)
            self._calls.agent_acted(agent_id)
            return
        if e.synthetic or e.isReplay and stripped.startswith("<local-command-stdout>"):
            core.notice(MAIN, e.line_no, "harness", _strip_tags(text))
            return
        if self._slash_command(text, stripped, e.line_no, e.uuid):
            return
        if stripped.startswith("<task-notification>"):
            self._task_notification_turn(text, e)
            return
        if stripped.startswith("[Request interrupted"):
            # the user stopped the turn: the CLI waits for a prompt (on disk nothing
            # else says so; on the wire a result follows)
            self._calls.interrupted(e.line_no)
            if turns.status != "compacting":
                turns.status = "idle"
                core.session_changed()
        if stripped.startswith(NON_PROMPT_MARKERS):
            level = "warning" if stripped.startswith("[Request interrupted") else "info"
            core.notice(MAIN, e.line_no, "harness", _strip_tags(text), level=level)
            return
        self._info.prompt_title(text)
        started_by = "command" if _TYPED_COMMAND.match(stripped) else "prompt"
        turns.open_turn(text, e.line_no, e.uuid, images, started_by=started_by, context=ide)

    def _slash_command(self, text: str, stripped: str, line_no: int, uuid: str | None) -> bool:
        """Whether ``text`` (a main-agent row's; ``stripped``: without its leading
        blanks) is a slash command or its output, and if so fold it: a command
        opens a turn; a local command's output (``/model``, ``/clear``, ``/mcp``…)
        says the model is not asked."""
        turns = self._turns
        if stripped.startswith(_COMMAND_HEADS) and "<command-name>" in stripped:
            # <command-message> comes first in some CLI versions, <command-name> in others
            turns.open_turn(_command_text(stripped), line_no, uuid, started_by="command")
            return True
        if not stripped.startswith(_OUTPUT_HEADS):
            return False
        core = self._core
        core.notice(MAIN, line_no, "harness", _strip_tags(text))
        turn = core.current_turn()
        if turn is not None and turn.started_by == "command":
            turns.local_command(turn)
        if turn is not None and not turn.answered and turns.status == "requesting":
            turns.status = "idle"
            core.session_changed()
        return True

    def on_local_command(self, e: F.LocalCommand, agent_id: str) -> None:
        """A ``system/local_command`` row: newer CLIs write a slash command the CLI
        runs itself there, not as a user row: the command (``<command-name>…``, or
        only what was typed: ``/status``), then its output (``<local-command-stdout>…``)."""
        text = as_text(e.content)
        stripped = text.lstrip()
        if agent_id == MAIN and not e.isSidechain:
            if self._slash_command(text, stripped, e.line_no, e.uuid):
                return
            if stripped.startswith("/"):
                self._turns.open_turn(stripped.rstrip(), e.line_no, e.uuid, started_by="command")
                return
        self._core.notice(agent_id, e.line_no, "command output", text)

    def _answered_by_call(self, call: ToolCall) -> None:
        """A ``--json-schema`` run's answer is its ``StructuredOutput`` call: once
        that call succeeded the model is done (on disk no result, and no text
        after it, says so)."""
        turns = self._turns
        if call.name == "StructuredOutput" and call.status == "done" \
                and turns.status == "requesting":
            turns.status = "idle"
            self._core.session_changed()

    def _task_notification_turn(self, text: str, e: F.User) -> None:
        """A ``<task-notification>`` the CLI sent the model as a user message (a
        background task or agent finished): fold the notification, and open the
        turn it starts, headed by what started it."""
        fields = dict(_TASK_NOTE.findall(text))
        tasks = self._tasks
        if not tasks.task_note(text, e.line_no):  # one "task … completed · tokens" notice
            tasks.task_notification_text(text, e.line_no)
        turn = self._core.current_turn()
        if turn is not None and turn.started_by == "task-notification" and not turn.answered:
            return  # the queued copy of the same notification opened it already
        self._turns.start_next_by_task(fields.get("summary") or "")
        self._turns.open_turn(None, e.line_no)

    # --- streaming partial messages ---------------------------------------------------------

    def on_stream_event(self, e: F.StreamEvent, agent_id: str) -> None:
        ev = e.event
        core = self._core
        if ev.type == "message_start" and ev.message is not None:
            self._stream_msg = ev.message.id
            if agent_id == MAIN:
                self._turns.ensure_turn(e.line_no)
                self._turns.status = "requesting"
                core.session_changed()
            return
        msg_id = e.api_message_id or self._stream_msg or ""
        if ev.type == "content_block_start" and ev.content_block is not None:
            btype = ev.content_block.type
            turn = core.turn_index()
            item: Item | None = None
            if btype == "text":
                item = TextItem(agent_id, e.line_no, turn, text=ev.content_block.text or "",
                                message_id=msg_id, streaming=True)
            elif btype == "thinking":
                item = ThinkingItem(agent_id, e.line_no, turn, message_id=msg_id, streaming=True)
            if item is not None:
                core.add(item)
                self._streaming.setdefault((agent_id, msg_id), []).append(item)
                self._stream_blocks[(agent_id, ev.index or 0)] = item
            return
        if ev.type == "content_block_delta" and ev.delta is not None:
            item = self._stream_blocks.get((agent_id, ev.index or 0))
            if item is None or not getattr(item, "streaming", False):
                return
            d = ev.delta
            if d.type == "text_delta" and isinstance(item, TextItem):
                item.text += d.text or ""
                core.touch(item)
            elif d.type == "thinking_delta" and isinstance(item, ThinkingItem):
                item.text += d.thinking or ""
                core.touch(item)


def _take_streamed(streamed: list[Item] | None, cls: type) -> Any:
    """The first item of class ``cls`` in ``streamed``, taken out of it."""
    if not streamed:
        return None
    for i, item in enumerate(streamed):
        if isinstance(item, cls):
            del streamed[i]
            return item
    return None


_IDE_HEADS = ("<ide_selection>", "<ide_opened_file>")
_IDE_OPENED = re.compile(r"opened the file (\S+) in the IDE")
_IDE_SELECTED = re.compile(r"selected the lines (\d+) to (\d+) from (\S+?):")


def _ide_context(blocks: list[F.Block]) -> tuple[tuple[str, ...], list[F.Block]]:
    """An IDE prompt's context chips and the blocks the person typed, when its
    first text block is an ``<ide_selection>`` / ``<ide_opened_file>`` block."""
    texts = [b for b in blocks if b.type == "text"]
    if not texts or not (texts[0].text or "").lstrip().startswith(_IDE_HEADS):
        return (), blocks
    chips: list[str] = []
    typed: list[F.Block] = []
    for b in blocks:
        text = (b.text or "").lstrip() if b.type == "text" else ""
        if text.startswith(_IDE_HEADS):
            chips.append(_ide_chip(text))
        else:
            typed.append(b)
    if not any(b.type != "text" or (b.text or "").strip() for b in typed):
        return tuple(chips), []
    return tuple(chips), typed


def _ide_chip(text: str) -> str:
    if m := _IDE_SELECTED.search(text):
        first, last, path = m.groups()
        lines = first if first == last else f"{first}-{last}"
        return f"selected line{'s' if first != last else ''} {lines} of {path.rsplit('/', 1)[-1]}"
    if m := _IDE_OPENED.search(text):
        return "opened " + m.group(1).rsplit("/", 1)[-1]
    return " ".join(_strip_tags(text).split())[:60]


def _strip_tags(text: str) -> str:
    return re.sub(r"</?[a-z][a-z0-9_-]*>", "", text).strip()


def _command_text(text: str) -> str:
    name = re.search(r"<command-name>(.*?)</command-name>", text, re.S)
    args = re.search(r"<command-args>(.*?)</command-args>", text, re.S)
    out = (name.group(1).strip() if name else "").strip()
    if not out.startswith("/"):
        out = "/" + out
    if args and args.group(1).strip():
        out += " " + args.group(1).strip()
    return out
