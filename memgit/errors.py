"""The one exception memgit users see."""


class MemgitError(Exception):
    """The one error memgit users see; its message says what to do."""
