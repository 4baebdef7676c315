"""The ways out of cctv, each closed to a hostile transcript: ``v`` hands the
desktop only real images; ``cctv replay --emit`` will not write a file's raw
bytes to a terminal; and with no terminal at all cctv says so and exits
instead of spinning.

The image viewer is a fake ``xdg-open`` on ``PATH`` that records what it was
given.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cctv.reducer.images import ImageInfo, NotAnImage, image_file, image_kind
from cctv.reducer.state import PromptItem
from cctv.viewer.app import CctvApp
from cctv.viewer.sources import FileTail
from cctv.widgets.transcript import TranscriptView

from conftest import FIXTURES, wait_for

PNG = (FIXTURES / "public" / "claude-code-log" / "real_projects"
       / "-Users-dain-workspace-danieldemmel-me-next" / "9e953218-585f-4692-89df-9e0747a31c68.jsonl")
GIF = b"GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00\x00\x00\x00," \
      b"\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;"
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00\xff\xd9"
HTML = b"<html><body><script>alert('from the transcript')</script></body></html>"
DESKTOP = b"[Desktop Entry]\nType=Application\nName=x\nExec=sh -c 'touch /tmp/pwned'\n"


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _image(media_type: str, data: str) -> ImageInfo:
    return ImageInfo(media_type, len(data) * 3 // 4, None, None, data)


# --------------------------------------------------------------------------- the bytes decide


@pytest.mark.parametrize(("data", "kind"), [(GIF, "gif"), (JPEG, "jpeg"),
                                            (b"RIFF\x1a\x00\x00\x00WEBPVP8L", "webp"),
                                            (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "png"),
                                            (HTML, None), (DESKTOP, None), (b"", None)])
def test_an_images_kind_comes_from_its_first_bytes(data: bytes, kind: str | None) -> None:
    assert image_kind(data) == kind


def test_an_image_file_is_named_by_its_bytes_not_by_what_the_transcript_says() -> None:
    assert image_file(_image("text/html", _b64(GIF))) == (GIF, "gif")
    assert image_file(_image("image/png", _b64(JPEG)[:40] + "\n" + _b64(JPEG)[40:])) == (JPEG, "jpeg")
    with pytest.raises(NotAnImage, match=r"not a PNG, JPEG, GIF or WebP image \(it says text/html\)"):
        image_file(_image("text/html", _b64(HTML)))
    with pytest.raises(NotAnImage, match="not a PNG"):
        image_file(_image("application/x-desktop", _b64(DESKTOP)))
    with pytest.raises(NotAnImage, match="not valid base64"):
        image_file(_image("image/png", "iVBORw0KGgo!!!!not base64"))


# --------------------------------------------------------------------------- v in the app


def _session_with_images(tmp_path: Path, images: list[tuple[str, str]]) -> Path:
    """A one-prompt transcript whose prompt holds these (media_type, data) images."""
    content = [{"type": "text", "text": "look at these"}]
    content += [{"type": "image", "source": {"type": "base64", "media_type": m, "data": d}}
                for m, d in images]
    row = {"type": "user", "message": {"role": "user", "content": content}, "uuid": "u1",
           "parentUuid": None, "sessionId": "s1", "timestamp": "2026-01-01T00:00:00Z",
           "cwd": "/tmp", "isSidechain": False, "userType": "external", "version": "2.0.5"}
    path = tmp_path / "s1.jsonl"
    path.write_text(json.dumps(row) + "\n")
    return path


@pytest.fixture
def viewer_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake ``xdg-open`` first on ``PATH``: each call appends its argument to the log."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "xdg-open.log"
    fake = bin_dir / "xdg-open"
    fake.write_text(f'#!/bin/sh\nprintf "%s\\n" "$1" >> {log}\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return log


async def _press_v(path: Path) -> list[str]:
    """Open ``path``, press ``v`` on its prompt; the notifications it gave."""
    app = CctvApp(FileTail(path, follow=False), clock=None)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: app.shown is not None and app.shown.ended is not None)
        view = app.screen.query_one(TranscriptView)
        index = next(i for i, it in enumerate(view.items)
                     if isinstance(it, PromptItem) and it.images)
        view.move_cursor(index)
        await pilot.press("v")
        await pilot.pause(0.3)
        assert app.is_running  # no crash
        return [str(n.message) for n in app._notifications]


async def _logged(log: Path) -> list[str]:
    for _ in range(40):  # the viewer starts in the background
        if log.exists():
            break
        await asyncio.sleep(0.05)
    return log.read_text().splitlines() if log.exists() else []


async def test_v_hands_the_viewer_only_real_images(tmp_path: Path, viewer_log: Path) -> None:
    """The sixth case: a ``media_type`` of text/html or application/x-desktop
    wrote a file of that type, with data from the transcript, and handed it to
    xdg-open. Now each is refused with its reason; a GIF that says it is HTML
    is opened as the GIF it is."""
    path = _session_with_images(tmp_path, [("text/html", _b64(HTML)),
                                           ("application/x-desktop", _b64(DESKTOP)),
                                           ("text/html", _b64(GIF))])
    notes = await _press_v(path)
    assert "image 1 of line 1 not opened: its bytes are not a PNG, JPEG, GIF or WebP image" \
           " (it says text/html)" in notes
    assert "image 2 of line 1 not opened: its bytes are not a PNG, JPEG, GIF or WebP image" \
           " (it says application/x-desktop)" in notes
    [opened] = await _logged(viewer_log)
    assert opened.endswith(".gif") and Path(opened).read_bytes() == GIF
    written = sorted(p.suffix for p in (tmp_path / "cache").rglob("*") if p.is_file())
    assert written == [".gif"]  # nothing else reached the disk


async def test_v_on_invalid_base64_is_refused_not_a_crash(tmp_path: Path, viewer_log: Path) -> None:
    """``binascii.Error`` ended the app (exit 1)."""
    path = _session_with_images(tmp_path, [("image/png", "iVBORw0KGgo=====*&^%")])
    notes = await _press_v(path)
    assert any("image 1 of line 1 not opened: its data is not valid base64" in n for n in notes)
    assert await _logged(viewer_log) == []


async def test_v_opens_a_real_png_by_its_bytes(viewer_log: Path) -> None:
    notes = await _press_v(PNG)
    [opened] = await _logged(viewer_log)
    assert opened.endswith(".png") and Path(opened).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert any(f"opened {opened}" == n for n in notes)


# --------------------------------------------------------------------------- --emit and terminals

STREAM = FIXTURES / "captures" / "stream" / "07_hooks.jsonl"


def _in_a_terminal(words: list[str], *, stdin_tty: bool = True,
                   timeout: float = 30) -> tuple[int, bytes]:
    """Run cctv with its stdout (and stdin) on a pseudo-terminal; its exit
    status and what reached the terminal."""
    import pty

    leader, follower = pty.openpty()
    stdin = follower if stdin_tty else subprocess.DEVNULL
    proc = subprocess.Popen([sys.executable, "-m", "cctv.viewer.cli", *words], stdin=stdin,
                            stdout=follower, stderr=follower, start_new_session=True)
    os.close(follower)
    out = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.close(leader)
    return proc.wait(timeout=timeout), out


def test_emit_to_a_terminal_refuses_with_a_hint() -> None:
    """The seventh case: a crafted file set the title and wrote the clipboard
    (OSC 0, OSC 52) through ``--emit`` to a terminal."""
    code, out = _in_a_terminal(["replay", str(STREAM), "--emit", "--speed", "64"])
    assert code == 2
    assert out.decode().strip() == (
        "cctv replay: --emit writes the file's raw bytes, which a terminal would act on:"
        " pipe it into cctv (cctv replay FILE --emit | cctv -), or add --raw")


def test_emit_raw_to_a_terminal_and_emit_to_a_pipe_write_the_bytes() -> None:
    code, out = _in_a_terminal(["replay", str(STREAM), "--emit", "--raw", "--speed", "64"])
    assert code == 0 and out.replace(b"\r\n", b"\n") == STREAM.read_bytes()
    res = subprocess.run([sys.executable, "-m", "cctv.viewer.cli", "replay", str(STREAM), "--emit",
                          "--speed", "64"], capture_output=True, timeout=60)
    assert res.returncode == 0 and res.stdout == STREAM.read_bytes()
@pytest.mark.parametrize("words", [[str(STREAM)], [], ["replay", str(STREAM)], ["demo"]])
def test_no_terminal_is_one_line_and_exit_2(words: list[str]) -> None:
    """The eighth case: ``cctv FILE </dev/null`` (as from cron) spun at 100% CPU
    for ever. No terminal to read keys from or draw on: one line, exit 2, at once."""
    started = time.monotonic()
    res = subprocess.run([sys.executable, "-m", "cctv.viewer.cli", *words], capture_output=True,
                         text=True, timeout=30, stdin=subprocess.DEVNULL, start_new_session=True)
    assert res.returncode == 2
    assert res.stderr == "cctv needs a terminal; try cctv summary / check / export\n"
    assert time.monotonic() - started < 10


def test_no_terminal_to_draw_on_is_one_line_and_exit_2() -> None:
    """Keys from a terminal, but standard error (where the screen is drawn) is a file."""
    import pty

    leader, follower = pty.openpty()
    try:
        res = subprocess.run([sys.executable, "-m", "cctv.viewer.cli", str(STREAM)],
                             stdin=follower, stdout=follower, stderr=subprocess.PIPE, text=True,
                             timeout=30, start_new_session=True)
    finally:
        os.close(follower)
        os.close(leader)
    assert res.returncode == 2
    assert res.stderr == "cctv needs a terminal; try cctv summary / check / export\n"
