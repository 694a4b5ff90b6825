"""Reflect: duplicates, supersession, stale anchors, lifecycle, proposals and landing them."""
