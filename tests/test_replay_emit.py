"""``cctv replay --emit``: the file's bytes, at their recorded pace."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES
from cctv.viewer.replay.emit import emit, plan_emit

STREAM = FIXTURES / "captures" / "stream"
ROOT = Path(__file__).resolve().parent.parent


class FakeTime:
    """A clock that moves only when slept on (plus an optional oversleep)."""

    def __init__(self, oversleep: float = 0.0) -> None:
        self.t = 0.0
        self.oversleep = oversleep
        self.sleeps = 0

    def clock(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.sleeps += 1
        self.t += seconds + self.oversleep


def test_emit_writes_every_recording_byte_for_byte(recording: Path) -> None:
    fake = FakeTime()
    out = io.BytesIO()
    plan = plan_emit(recording)
    emit(plan, out, speed=8.0, clock=fake.clock, sleep=fake.sleep)
    assert out.getvalue() == recording.read_bytes()


def test_emit_keeps_a_missing_final_newline_and_crlf(tmp_path: Path) -> None:
    data = (STREAM / "01_simple_text.jsonl").read_bytes()
    odd = tmp_path / "odd.jsonl"
    odd.write_bytes(data.replace(b"\n", b"\r\n", 1).rstrip(b"\n"))
    out = io.BytesIO()
    fake = FakeTime()
    emit(plan_emit(odd), out, clock=fake.clock, sleep=fake.sleep)
    assert out.getvalue() == odd.read_bytes()


def test_emit_paces_lines_at_their_offsets_over_the_speed() -> None:
    path = STREAM / "06_background_bash.jsonl"
    plan = plan_emit(path, skip_idle=False)
    assert plan.source == "derived"
    fake = FakeTime()
    times: list[float] = []

    class Recorder(io.BytesIO):
        def write(self, b: bytes) -> int:
            times.extend([fake.t] * b.count(b"\n"))  # the time each line went out
            return super().write(b)

    emit(plan, Recorder(), speed=2.0, clock=fake.clock, sleep=fake.sleep)
    assert times == pytest.approx([o / 2.0 for o in plan.offsets])


def test_late_wake_ups_do_not_accumulate_drift() -> None:
    plan = plan_emit(STREAM / "06_background_bash.jsonl", skip_idle=False)
    fake = FakeTime(oversleep=0.004)  # every sleep 4 ms late
    emit(plan, io.BytesIO(), speed=1.0, clock=fake.clock, sleep=fake.sleep)
    assert fake.sleeps > 5
    assert max(plan.lateness) <= 0.004 + 1e-9  # one oversleep, never the sum of them
    assert fake.t - plan.offsets[-1] <= 0.004 + 1e-9


def test_from_line_writes_the_lines_before_at_once() -> None:
    path = STREAM / "06_background_bash.jsonl"
    plan = plan_emit(path, from_line=5)
    fake = FakeTime()
    out = io.BytesIO()
    emit(plan, out, clock=fake.clock, sleep=fake.sleep)
    assert out.getvalue() == path.read_bytes()
    assert len(plan.lateness) == len(plan.lines) - 4
    assert fake.t == pytest.approx(plan.offsets[-1] - plan.offsets[4])


def test_emit_command_runs_headless_and_reports_a_missing_file(tmp_path: Path) -> None:
    small = tmp_path / "s.jsonl"
    small.write_bytes(b'{"type":"keep_alive"}\n{"type":"keep_alive"}\n')
    res = subprocess.run([sys.executable, "-m", "cctv.viewer.cli", "replay", str(small), "--emit",
                          "--speed", "64"], cwd=ROOT, capture_output=True, timeout=60)
    assert res.returncode == 0 and res.stdout == small.read_bytes()
    res = subprocess.run([sys.executable, "-m", "cctv.viewer.cli", "replay", str(tmp_path / "no.jsonl"),
                          "--emit"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and "no such file" in res.stderr
    res = subprocess.run([sys.executable, "-m", "cctv.viewer.cli", "replay", str(small), "--speed",
                          "100"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and "--speed" in res.stderr


def test_speed_max_emits_every_line_at_once() -> None:
    """``--speed max``: no pacing, however long the recording's gaps (this one
    has a background job's minutes): never a sleep, every byte."""
    path = STREAM / "06_background_bash.jsonl"
    plan = plan_emit(path, skip_idle=False)
    assert plan.offsets[-1] > 1.0
    fake = FakeTime()
    out = io.BytesIO()
    emit(plan, out, speed=float("inf"), clock=fake.clock, sleep=fake.sleep)
    assert out.getvalue() == path.read_bytes() and fake.sleeps == 0 and fake.t == 0.0


def test_speed_max_is_taken_by_emit_only(tmp_path: Path, capsys, monkeypatch) -> None:
    from cctv.viewer.cli import main

    path = STREAM / "06_background_bash.jsonl"
    out = io.BytesIO()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(out))
    assert main(["replay", str(path), "--emit", "--speed", "max"]) == 0
    sys.stdout.flush()
    assert out.getvalue() == path.read_bytes()
    with pytest.raises(SystemExit) as exc:
        main(["replay", str(path), "--speed", "max"])
    assert exc.value.code == 2 and "--speed max goes with --emit" in capsys.readouterr().err
