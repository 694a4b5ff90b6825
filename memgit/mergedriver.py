"""git's merge driver for memory files, by the name git runs it: `python -I -m memgit.mergedriver
%O %A %B %L %P …` (written into the clone's git config by `memgit init`). The driver itself is
`memgit.git.mergedriver`."""

from __future__ import annotations

import sys

from memgit.git.mergedriver import main

if __name__ == "__main__":
    sys.exit(main())
