"""The one exception memgit users see."""


class MemgitError(Exception):
    """The one error memgit users see; its message says what to do."""


class NotStaged(MemgitError):
    """git could not even stage a change (a stale index.lock, say): the files are written and
    git holds none of it, so an interrupted change set must stay journaled to be finished."""


class NotCommitted(MemgitError):
    """git refused or failed the commit of a change memgit wrote (a hook, no identity): the files
    are written, nothing of them is staged, and the change stays journaled to be finished
    (`memgit finish`) or undone (`memgit abandon`)."""
