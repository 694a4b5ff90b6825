"""The warm embedder process, by the name it is started with: `python -I -m memgit.warm EMBEDDER`
(`memgit.index.warm.spawn`). It serves one embedder on a private socket until idle."""

from __future__ import annotations

import os
import sys

from memgit.index.warm import IDLE_SECONDS, serve

if __name__ == "__main__":
    idle = float(os.environ.get("MEMGIT_WARM_IDLE", IDLE_SECONDS))
    serve(sys.argv[1] if len(sys.argv) > 1 else "minilm", idle)
