"""Screens pushed over the session view: raw frame, help, stderr, sub-agent transcripts."""
