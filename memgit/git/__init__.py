"""memgit and git: the repository, the memory diff, the secret gate, the merge driver and its setup, git hooks."""
