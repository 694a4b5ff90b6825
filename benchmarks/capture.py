#!/usr/bin/env python3
"""How well and how fast `memgit capture` extracts memories from session transcripts.

    python benchmarks/capture.py [--mb 20] [--data DIR]

Held-out quality first: with `--data` (the development sets' folder, or $MEMGIT_EVAL_DIR),
the `capture-real` set's own scorer runs this environment's `memgit capture` on 19 real
sessions from public repositories and its summary is printed. That is the measurement; a
run where a session crashed or no session was scored prints no figure (exit 2).

Regression fixtures next (not a measurement: the rules were written with them): every fixture
in `tests/data/transcripts/` is captured into an empty store (the
whole pipeline: rules, secret redaction, duplicate check) and compared with the memories a
careful engineer would keep (`gold.json`): a candidate matches a gold memory when its kind
agrees (`stated` is convention or preference) and its title and body contain every gold word;
each gold memory is matched once. Precision = matched candidates / candidates; recall =
matched gold memories / gold memories; per kind, over all fixtures.

Speed: a Claude Code transcript of about `--mb` MB (the Claude fixture repeated with fresh
ids and big tool outputs) is read and its candidates extracted; wall time and the peak
resident memory of this process are printed. Standard library and memgit only.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Not this folder: a script here named like a standard module would shadow it.
sys.path[:] = [str(ROOT)] + [p for p in sys.path if Path(p or ".").resolve() != ROOT / "benchmarks"]
sys.path.insert(0, str(Path(__file__).resolve().parent))  # this folder for this one import only
import validity  # noqa: E402  (benchmarks/validity.py: one module for every benchmark in a run)
sys.path.pop(0)

import memgit  # noqa: E402
from memgit.agents import transcripts  # noqa: E402
from memgit.capture.extract import extract  # noqa: E402

DATA = ROOT / "tests" / "data" / "transcripts"


def kind_class(kind: str) -> str:
    return "stated" if kind in ("convention", "preference") else kind


def heldout(data: Path) -> None:
    """The capture-real set, scored by its own score.py (its last line is a JSON summary)."""
    scorer = data / "capture-real" / "score.py"
    validity.require(scorer.is_file(), f"no capture-real set at {data} (no capture-real/score.py)")
    done = subprocess.run([sys.executable, str(scorer), sys.prefix], capture_output=True, text=True,
                          check=False)
    validity.require(done.returncode == 0,
                     f"the capture-real scorer exited {done.returncode}: {done.stderr[-300:]}")
    try:
        summary = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise validity.InvalidRun(f"the capture-real scorer printed no summary: {done.stdout[-300:]}") \
            from None
    validity.require(summary.get("sessions"), "the capture-real scorer scored no session")
    validity.require(not summary.get("crashed"), f"capture crashed on {', '.join(summary['crashed'])}")
    o = summary["overall"]
    print(f"held out: capture-real, {summary['sessions']} real sessions, "
          f"{summary['gold_items']} labelled memories: "
          f"precision {o['precision']}, recall {o['recall']} (tp {o['tp']}, fp {o['fp']}, fn {o['fn']}); "
          f"refused {len(summary['refused'])}, leaks {sum(summary['leaks'].values())}")
    for kind, v in summary["by_gold_kind"].items():
        print(f"  recall {kind:11} {v['found']}/{v['gold']}")


def quality() -> None:
    print("regression fixtures (tests/data/transcripts, written with the rules: not a measurement)")
    gold = json.loads((DATA / "gold.json").read_text())
    found_by, kept_by, gold_by, matched_by = Counter(), Counter(), Counter(), Counter()
    with tempfile.TemporaryDirectory() as tmp:
        for name, wanted in gold.items():
            if name.startswith("_"):
                continue
            repo = Path(tmp) / name.replace(".", "-")
            repo.mkdir()
            subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
            mem = memgit.open(repo, warn=lambda _m: None)
            mem.init(commit=False)
            proposal = mem.capture(DATA / name)
            left = list(wanted)
            for c in proposal.candidates:
                k = kind_class(c.kind)
                found_by[k] += 1
                text = (c.title + "\n" + c.body).casefold()
                hit = next((g for g in left if g["kinds"] == k and all(w.casefold() in text for w in g["words"])), None)
                if hit is not None:
                    left.remove(hit)
                    kept_by[k] += 1
                    matched_by[k] += 1
                else:
                    print(f"  not in gold: {name}: [{c.kind}] {c.title}")
            for g in wanted:
                gold_by[g["kinds"]] += 1
            for g in left:
                print(f"  missed: {name}: [{g['kinds']}] {' + '.join(g['words'])}")
    print(f"{'kind':10} {'found':>5} {'kept':>5} {'gold':>5} {'precision':>9} {'recall':>6}")
    for k in ("stated", "lesson", "decision", "summary"):
        p = kept_by[k] / found_by[k] if found_by[k] else float("nan")
        r = matched_by[k] / gold_by[k] if gold_by[k] else float("nan")
        print(f"{k:10} {found_by[k]:5} {kept_by[k]:5} {gold_by[k]:5} {p:9.2f} {r:6.2f}")


def speed(megabytes: int) -> None:
    lines = (DATA / "claude-session.jsonl").read_text().splitlines()[:-1]
    noise = json.dumps({"type": "user", "sessionId": "s", "uuid": "big", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t", "content": "log line\n" * 20_000}]}})
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.jsonl"
        size = 0
        with open(path, "w") as handle:
            copy = 0
            while size < megabytes * 1024 * 1024:
                copy += 1
                for line in lines + [noise]:
                    text = line.replace("toolu_", f"toolu_{copy}_").replace('"x-', f'"x{copy}-') + "\n"
                    handle.write(text)
                    size += len(text)
        started = time.perf_counter()
        transcript = transcripts.read(path)
        read = time.perf_counter() - started
        found = extract(transcript)
        total = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{size / 2**20:.1f} MB, {transcript.lines} lines, {len(transcript.events)} events: read {read:.2f}s, "
          f"read + extract {total:.2f}s, {len(found)} candidates, peak RSS {peak:.0f} MB")


def main() -> int:
    import os

    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=20)
    default = Path(os.environ.get("MEMGIT_EVAL_DIR", ROOT.parent / "shared" / "eval"))
    parser.add_argument("--data", type=Path, default=default,
                        help="the development sets (with capture-real/); default $MEMGIT_EVAL_DIR, "
                             "else shared/eval beside the checkout")
    args = parser.parse_args()

    def run() -> int:
        heldout(args.data)
        quality()
        speed(args.mb)
        return 0

    return validity.refuse_on_invalid(run, "capture")


if __name__ == "__main__":
    sys.exit(main())
