"""Kept for existing imports: the renderers live in :mod:`widgets.cards`."""

from cctv.widgets.cards import *  # noqa: F401,F403
from cctv.widgets.cards import (  # noqa: F401
    EXPAND_LINES,
    FOLD_LINES,
    Palette,
    RenderContext,
    estimate_height,
    margin_top,
    plain_rows,
    render_item,
)
