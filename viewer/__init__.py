"""cctv viewer: the app, screens, CLI and input sources."""
