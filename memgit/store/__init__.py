"""The folder of memory files: scanning, change sets, the writer, import, lint, history."""
