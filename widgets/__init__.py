"""cctv widgets: Textual widgets that render reducer state."""
