"""``cctv replay``: a recording read for replay, its checkpoints built in a
child process, the replay controller the session screens draw, its screen and
app, and ``--emit`` (the lines at their recorded pace, headless)."""
