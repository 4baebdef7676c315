"""``cctv usage``: what the saved sessions cost, from the index, each request
once across sessions, estimates marked."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from cctv.reducer.summary import summarize
from cctv.viewer.cli import main
from cctv.viewer.index import SessionIndex
from cctv.viewer.index.usage_report import run_usage
from cctv.viewer.loader import load_path

from test_index import build_tree


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


def _usage(projects: Path, *args: str) -> list[dict]:
    out, err = io.StringIO(), io.StringIO()
    by = args[0] if args else "day"
    since = args[1] if len(args) > 1 else None
    assert run_usage(str(projects), by, since, True, True, out, err) == 0, err.getvalue()
    return json.loads(out.getvalue())


def _sessions(projects: Path) -> list[Path]:
    return sorted(p for p in projects.glob("*/*.jsonl") if not p.name.startswith("agent-"))


def test_each_sessions_line_is_its_summarys_cost(tmp_path: Path) -> None:
    projects = build_tree(tmp_path)
    lines = {d["session"]: d for d in _usage(projects, "session")}
    total = lines.pop("total")
    checked = 0
    for path in _sessions(projects):
        data = summarize(load_path(path).session)
        line = lines.get(data["session_id"])
        if line is None:  # a session with no request (a title row, a command)
            assert not data["agents"][0]["output_tokens"]
            continue
        assert line["cost_usd"] == pytest.approx(data["cost_usd"], abs=1e-5), path.name
        assert line["cost_source"] == data["cost_source"]
        assert line["output_tokens"] == sum(a["output_tokens"] for a in data["agents"])
        checked += 1
    assert checked >= 30
    assert total["cost_usd"] == pytest.approx(sum(d["cost_usd"] for d in lines.values()), abs=1e-5)
    assert total["cost_source"] == "mixed"  # captures recorded theirs, the public ones did not
    by_day = _usage(projects, "day")
    assert by_day[-1]["cost_usd"] == pytest.approx(total["cost_usd"], abs=1e-5)
    assert [d["day"] for d in by_day[:-1]] == sorted(d["day"] for d in by_day[:-1])


def test_a_resumed_copy_counts_once_and_only_what_it_adds(tmp_path: Path) -> None:
    projects = build_tree(tmp_path, captures=False)
    before = _usage(projects, "model")[-1]
    source = max(_sessions(projects), key=lambda p: p.stat().st_size)
    copied = []
    for line in source.read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        if "sessionId" in d:
            d["sessionId"] = "00000000-0000-4000-8000-0000000000aa"
        copied.append(json.dumps(d))
    resumed = source.with_name("00000000-0000-4000-8000-0000000000aa.jsonl")
    resumed.write_text("\n".join(copied) + "\n", encoding="utf-8")
    after = _usage(projects, "model")[-1]
    assert after["requests"] == before["requests"]
    assert after["cost_usd"] == pytest.approx(before["cost_usd"])
    # its requests are the first session's: it adds no line of its own
    assert "00000000-0000-4000-8000-0000000000aa" not in {d["session"] for d in _usage(projects, "session")}


def test_since_week_and_the_marks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    projects = build_tree(tmp_path)
    days = _usage(projects, "day")[:-1]
    cut = days[len(days) // 2]["day"]
    later = _usage(projects, "day", cut)
    assert [d["day"] for d in later[:-1]] == [d["day"] for d in days if d["day"] >= cut]
    assert later[-1]["requests"] == sum(d["requests"] for d in days if d["day"] >= cut)
    weeks = _usage(projects, "week")
    assert all(w["week"][4:6] == "-W" for w in weeks[:-1])
    assert weeks[-1]["cost_usd"] == pytest.approx(_usage(projects, "day")[-1]["cost_usd"])
    assert main(["usage", str(projects), "--by", "project"]) == 0
    text = capsys.readouterr().out
    demo = next(l for l in text.splitlines() if l.startswith("/home/ada/src/demo"))
    assert "~" not in demo and "$" in demo  # the captures recorded their costs
    assert any(l.split()[-1].startswith("~$") for l in text.splitlines()[1:-2])
    assert "~: estimated from the tokens" in text


def test_a_model_without_a_price_is_named_not_counted_as_zero(tmp_path: Path) -> None:
    projects = build_tree(tmp_path, captures=False)
    source = max(_sessions(projects), key=lambda p: p.stat().st_size)
    text = source.read_text(encoding="utf-8")
    source.write_text(text.replace('"model":"claude-', '"model":"claude-fable-'), encoding="utf-8")
    lines = _usage(projects, "model")
    fable = [d for d in lines if d["model"].startswith("claude-fable-")]
    assert fable and all(d["cost_usd"] is None and d["cost_source"] is None
                         and d["output_tokens"] > 0 for d in fable)
    assert set(lines[-1]["unpriced_models"]) == {d["model"] for d in fable}


def test_nothing_is_read_again_when_nothing_changed(tmp_path: Path) -> None:
    projects = build_tree(tmp_path)
    first = _usage(projects, "day")
    index = SessionIndex(projects)
    assert index.refresh().read == 0
    index.close()
    assert _usage(projects, "day") == first
    with pytest.raises(SystemExit) as bad:
        main(["usage", str(projects), "--since", "yesterday"])
    assert bad.value.code == 2
