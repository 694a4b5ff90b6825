"""Agents: their transcripts and sessions, checkpoints, briefings, hand-off, hooks and MCP setup."""
