"""Capture: memories proposed from a finished agent session, shown and applied."""
