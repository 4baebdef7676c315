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


def test_local_commands_under_a_caveat_are_not_rewinds() -> None:
    # 12a546d1 (CLI 1.0.56) lines 1-5: a caveat row (isMeta), then "/clear" (line 2) and its
    # <local-command-stdout> (3), then "!uv run pytest" as <bash-input> (4) whose parent is the
    # caveat again (a sibling of /clear), and its <bash-stdout> (5): no branch was abandoned
    feed = fold_file(SAMPLE + "12a546d1-83a7-49a6-abba-5400db340b43.jsonl")
    s = feed.session
    assert s.rewinds == 0 and not _notices(s, "rewind")
    assert not [i for i in s.main.items if i.hidden]
    for name in ("0d3a8e6f-290f-4105-a327-a2496e5e2a83", "937c6e6b-27e7-4edd-86f1-ad28f9731841",
                 "cbc0f75b-b36d-4efd-a7da-ac800ea30eb6"):
        assert fold_file(SAMPLE + name + ".jsonl").session.rewinds == 0, name


def test_a_real_branch_is_a_rewind() -> None:
    # -experiments-ideas/03eb5929 (CLI 2.1.42): line 18 is a prompt under eb84e3ee; line 38,
    # twenty rows later, is another prompt re-parented onto that same eb84e3ee: the branch
    # from line 18 to 37 (three prompts and their answers) is abandoned
    s = fold_file("public/claude-code-log/real_projects/-experiments-ideas/"
                  "03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl").session
    assert s.rewinds == 1
    assert [n.line_no for n in _notices(s, "rewind")] == [38]
    hidden = [i for i in s.main.items if i.hidden]
    assert [i.line_no for i in hidden if i.kind == "prompt"] == [18, 25, 32]
    assert all(18 <= i.line_no < 38 for i in hidden)
    # the hand-made fork of claude-code-log's tests still is one
    assert fold_file("public/claude-code-log/dag_fork.jsonl").session.rewinds == 1
