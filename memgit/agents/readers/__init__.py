"""One reader per transcript format, each a module with `FORMAT`, `sniff` and `read` (the
`Reader` protocol of `memgit.agents.readers.reader`); `memgit.agents.transcripts` holds the
registry that picks one."""
