"""memgit and git: the repository and its state, what a commit would take, commits on a new branch,
history, the memory diff, the secret gate, the merge driver and its setup, git hooks."""
