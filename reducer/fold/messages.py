"""Messages: assistant blocks, user prompts, streamed partial messages, titles.

An assistant frame's blocks become text, thinking and tool-call items (merged
with the items its stream events drew); a user frame is a tool result, a
human prompt that opens a turn, or a notice the CLI wrote itself.
"""

from __future__ import annotations

import re
from typing import Any

from .. import frames as F
from ..state import MAIN, Item, PromptItem, TextItem, ThinkingItem
from .kernel import Kernel, block_text, usage_counts

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
_TASK_NOTE = re.compile(r"<(task-id|tool-use-id|output-file|status|summary)>(.*?)</\1>", re.S)


class Messages(Kernel):
    """Assistant, user and stream_event frames, and the title rows."""

    # --- assistant ---------------------------------------------------------------------

    def _assistant(self, e: F.Assistant, agent_id: str) -> None:
        agent = self.agent_for(agent_id)
        msg = e.message
        if agent_id == MAIN:
            self._ensure_turn(e.line_no).answered = True
            if self.status != "compacting":
                # a final stop reason (on-disk rows carry it) means the model is done
                self.status = "idle" if msg.stop_reason in _FINAL_STOPS else "requesting"
        if msg.model and msg.model != "<synthetic>" and agent_id == MAIN:
            self.model = self.model or msg.model
        turn = self._turn_index(agent_id)
        if e.supersedes:
            for uuid in e.supersedes:
                for item in self._uuid_items(uuid):
                    item.hidden = True
                    self._touch(item)
        # usage: once per (message id, request id), the latest frame's figures
        if msg.usage is not None and msg.id:
            key = (msg.id, e.request_id or e.requestId)
            new = usage_counts(msg.usage)
            old = self._usage_by_message.get(key)
            self._usage_by_message[key] = new
            agent.output_tokens += new[1] - old[1] if old is not None else new[1]
            if agent_id == MAIN:  # main loop only, like result.usage
                self.assistant_usage.add_counts(new, old)
                self.context_tokens = sum(new)
        mkey = (agent_id, msg.id)
        streamed = self._streaming.get(mkey)
        for block in msg.content:
            btype = block.type
            if btype == "text":
                item = self._take_streamed(streamed, TextItem) if streamed else None
                if item is not None:
                    item.text = block.text or ""
                    item.streaming = False
                    item.line_no = e.line_no
                    item.source = self._source
                    item.uuid = e.uuid
                    self._index_uuid(e.uuid or "", item)
                    self._touch(item)
                else:
                    item = self._add(TextItem(agent_id, e.line_no, turn, e.uuid,
                                              text=block.text or "", message_id=msg.id))
            elif btype in ("thinking", "redacted_thinking"):
                text = block.thinking or ""
                redacted = btype == "redacted_thinking" or not text
                tokens = self._pending_thinking
                self._pending_thinking = 0
                self.live_thinking_tokens = 0
                item = self._take_streamed(streamed, ThinkingItem) if streamed else None
                if item is not None:
                    item.text = text or item.text
                    item.redacted = redacted and not item.text
                    item.tokens = tokens or item.tokens
                    item.streaming = False
                    item.line_no = e.line_no
                    item.source = self._source
                    self._touch(item)
                else:
                    item = self._add(ThinkingItem(agent_id, e.line_no, turn, e.uuid, text=text,
                                                  redacted=redacted, tokens=tokens,
                                                  message_id=msg.id))
            elif btype in ("tool_use", "server_tool_use"):
                item = self._tool_use(agent, block, e, turn)
            else:
                label = btype or "block"
                item = self._notice(agent_id, e.line_no, "content", f"[{label}]")
                item.uuid = e.uuid
        if streamed is not None and not streamed:
            del self._streaming[mkey]
        if e.error or e.isApiErrorMessage:
            text = block_text(msg.content) or str(e.error)
            self._notice(agent_id, e.line_no, "api error", f"API error: {e.error or ''} {text}".strip(),
                         level="error")
        if e.aborted:
            self._notice(agent_id, e.line_no, "interrupted", "response cut short by an interrupt",
                         level="warning")

    def _take_streamed(self, streamed: list[Item] | None, cls: type) -> Any:
        if not streamed:
            return None
        for i, item in enumerate(streamed):
            if isinstance(item, cls):
                del streamed[i]
                return item
        return None

    # --- user --------------------------------------------------------------------------

    def _user(self, e: F.User, agent_id: str) -> None:
        content = e.message.content
        results = [b for b in content if b.type == "tool_result"] if isinstance(content, list) else []
        if results:
            payload = e.result_payload
            for block in results:
                self._tool_result(block, payload if len(results) == 1 else None, e, agent_id)
            return
        ide: tuple[str, ...] = ()
        if isinstance(content, list) and agent_id == MAIN:
            ide, typed = _ide_context(content)
            if ide and typed:
                content = typed
        text = block_text(content)
        images = tuple(b.source for b in content if b.type == "image") \
            if isinstance(content, list) else ()
        if self._awaiting_summary and e.synthetic and self._last_compaction is not None:
            self._last_compaction.summary = text
            self._awaiting_summary = False
            self._touch(self._last_compaction)
            return
        if e.isCompactSummary and self._last_compaction is not None:
            self._last_compaction.summary = text
            self._touch(self._last_compaction)
            return
        stripped = text.lstrip()
        if agent_id != MAIN:
            agent = self.agent_for(agent_id)
            if not agent.items and not e.synthetic:
                self._add(PromptItem(agent_id, e.line_no, None, e.uuid, text=text, images=images))
            else:
                self._notice(agent_id, e.line_no, "message", text)
            self._touch_agent_call(agent_id)
            return
        if e.synthetic or e.isReplay and stripped.startswith("<local-command-stdout>"):
            self._notice(MAIN, e.line_no, "harness", _strip_tags(text))
            return
        if stripped.startswith(_COMMAND_HEADS) and "<command-name>" in stripped:
            # <command-message> comes first in some CLI versions, <command-name> in others
            self._open_turn(_command_text(stripped), e.line_no, e.uuid, started_by="command")
            return
        if stripped.startswith("<local-command-stdout>") or stripped.startswith("<local-command-stderr>"):
            # a local command (/model, /clear, /mcp…) printed its output: the model is not asked
            self._notice(MAIN, e.line_no, "harness", _strip_tags(text))
            turn = self.current_turn
            if turn is not None and not turn.answered and self.status == "requesting":
                self.status = "idle"
                self._changed("session")
            return
        if stripped.startswith("<task-notification>"):
            self._task_notification_turn(text, e)
            return
        if stripped.startswith("[Request interrupted"):
            self._interrupted(e.line_no)
        if stripped.startswith(NON_PROMPT_MARKERS):
            level = "warning" if stripped.startswith("[Request interrupted") else "info"
            self._notice(MAIN, e.line_no, "harness", _strip_tags(text), level=level)
            return
        if self._title_rank > 3 and text and not text.isspace():  # not strip(): a copy of 12 MB
            self._set_title(text, 3)
        self._open_turn(text, e.line_no, e.uuid, images, started_by="prompt", context=ide)

    def _task_notification_turn(self, text: str, e: F.User) -> None:
        """A ``<task-notification>`` the CLI sent the model as a user message (a
        background task or agent finished): fold the notification, and open the
        turn it starts, headed by what started it."""
        fields = dict(_TASK_NOTE.findall(text))
        if not self._task_note(text, e.line_no):  # one "task … completed · tokens" notice
            self._task_notification_text(text, e.line_no)
        turn = self.current_turn
        if turn is not None and turn.started_by == "task-notification" and not turn.answered:
            return  # the queued copy of the same notification opened it already
        self._pending_start = fields.get("summary") or ""
        self._open_turn(None, e.line_no)

    # --- streaming partial messages ---------------------------------------------------------

    def _stream_event(self, e: F.StreamEvent, agent_id: str) -> None:
        ev = e.event
        if ev.type == "message_start" and ev.message is not None:
            self._stream_msg = ev.message.id
            if agent_id == MAIN:
                self._ensure_turn(e.line_no)
                self.status = "requesting"
                self._changed("session")
            return
        msg_id = e.api_message_id or getattr(self, "_stream_msg", "") or ""
        if ev.type == "content_block_start" and ev.content_block is not None:
            btype = ev.content_block.type
            turn = self._turn_index(agent_id)
            item: Item | None = None
            if btype == "text":
                item = TextItem(agent_id, e.line_no, turn, text=ev.content_block.text or "",
                                message_id=msg_id, streaming=True)
            elif btype == "thinking":
                item = ThinkingItem(agent_id, e.line_no, turn, message_id=msg_id, streaming=True)
            if item is not None:
                self._add(item)
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
                self._touch(item)
            elif d.type == "thinking_delta" and isinstance(item, ThinkingItem):
                item.text += d.thinking or ""
                self._touch(item)

    # --- titles ------------------------------------------------------------------------

    def _title_row(self, e: F.Entry, agent: str) -> None:
        if isinstance(e, F.CustomTitle):
            self._set_title(e.customTitle, 0)
        elif isinstance(e, F.AiTitle):
            self._set_title(e.aiTitle, 1)
        elif isinstance(e, F.Summary):
            # a summary names this session only when its leaf is one of its rows: older
            # CLIs copy the summaries of earlier sessions into a resumed one's head
            leaf = e.leafUuid
            if not leaf or leaf in self._parents:
                self._set_title(e.summary, 2)
            else:
                self._pending_summaries[leaf] = e.summary

    def _set_title(self, text: str, rank: int) -> None:
        if rank <= self._title_rank and text:
            head = text[:4096] if text[:4096].strip() else text.lstrip()[:4096]
            self.title = " ".join(head.split())[:200]  # not the whole text: 12 MB of words
            # split into a million strings took 13x the text in memory
            self._title_rank = rank
            self._changed("session")


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
