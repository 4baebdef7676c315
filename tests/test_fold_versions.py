"""Every CLI version read right (issue 7 §2), each rule on the real file that shows it.

Files are under ``public/claude-code-log/real_projects/`` (real ``~/.claude/projects``
folders written by CLI 1.0.24 to 2.1.x) unless the path says otherwise; the
comment on each test names the lines the expectation was read from.
"""

from __future__ import annotations

from reducer import frames as F
from reducer.decode import decode_line
from reducer.state import MAIN, NoticeItem, ProblemItem

from conftest import fold_file

SAMPLE = "public/claude-code-log/real_projects/-Users-dain-workspace-claude-code-log-sample/"


def _notices(session, category: str, agent: str = MAIN) -> list[NoticeItem]:
    return [i for i in session.agents[agent].items
            if isinstance(i, NoticeItem) and i.category == category]


def test_system_rows_without_subtype_are_notices_not_malformed() -> None:
    # 0d3a8e6f (CLI 1.0.43) line 36: {"type":"system","content":"Running \x1b[1mPostToolUse:
    # MultiEdit\x1b[22m...","level":"info"}: no subtype, as CLI 1.0.x wrote hook results
    s = fold_file(SAMPLE + "0d3a8e6f-290f-4105-a327-a2496e5e2a83.jsonl").session
    assert s.malformed == []
    assert not [i for i in s.main.items if isinstance(i, ProblemItem)]
    line36 = next(i for i in _notices(s, "system") if i.line_no == 36)
    assert line36.text == "Running PostToolUse:MultiEdit..."  # the terminal styling dropped
    assert s.kinds["system"] > 0 and not any(k == "system/" for k in s.kinds)
    bare = decode_line(b'{"type":"system"}')
    assert isinstance(bare, F.SystemOther) and (bare.subtype, bare.kind_key) == ("", "system")
    # public/claude-code-log/system_model_change.jsonl (CLI 1.0.33), its one line:
    # "Claude Opus 4 limit reached, now using Sonnet 4", level warning, no subtype
    s = fold_file("public/claude-code-log/system_model_change.jsonl").session
    fallback = [i for i in _notices(s, "system") if "limit reached" in i.text]
    assert [(i.text, i.level) for i in fallback] == [
        ("Claude Opus 4 limit reached, now using Sonnet 4", "warning")]
