"""cctv reducer: decoding Claude Code frames and folding them into session state. No Textual imports."""
