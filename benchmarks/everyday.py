"""False interrupts on everyday correct calls, written by hand outside any dataset.

Each line of ``benchmarks/everyday/*.jsonl`` is one correct call a careful model would make, with
the tools and the conversation before it: ``{"id", "kind": "single" | "step", "tools", "messages",
"call"}``. The guard should let every one run (allow, repair or warn); an interrupt (retry,
ask_human, block) is a false one.

- ``tuned.jsonl`` (99 calls): written while the rules were tuned (assistant, maths, developer and
  customer-support requests, trajectories with tool results): a development set, not a measure.
- ``blind23.jsonl`` (90 calls: 50 single, 40 trajectory steps in six languages): written by a
  helper who read neither the project nor the datasets, first measured before any rule was
  changed for it (the closing note of the stop that added it says which figures are blind).
- ``blind24.jsonl`` (142 calls: 70 single in the style of function-calling leaderboards'
  textbook and live requests and of developer tools, 72 steps of 14 agent trajectories with
  tool results), written the same way by a later helper and measured blind the same way.
- ``blind25.jsonl`` (161 calls: 80 single, function-calling leaderboard "live" requests in eight
  languages, textbook derivations and calls that read a system prompt's context; 81 steps of 18
  customer-support, coding, research and assistant trajectories) and ``blind26.jsonl`` (98 steps
  of 20 trajectories in the style of public agent benchmarks: RapidAPI tools ending in a
  ``Finish`` answer, retail and airline support under a written policy, multi-turn file,
  ticket, trading and travel APIs), written by two more helpers and measured blind the same way.
- ``blind27.jsonl`` (121 calls: 60 single in the leaderboards' "simple", "multiple" and "live"
  styles in nine languages, 61 steps of 12 booking, SRE, data-analysis and assistant
  trajectories), written by a fifth helper after the fixes blind25 and blind26 led to, and
  measured blind against them.
- ``blind28.jsonl`` (80 single calls: "live" requests in eight languages, textbook derivations,
  system-prompt context, several similar tools) and ``blind29.jsonl`` (92 steps of 16
  trajectories: support agents under a policy, app automation, coding, research and data
  analysis, travel and shopping with a final answer), written by two more helpers on
  2026-11-29 and measured blind at the session's start and at its second commit.
- ``blind30.jsonl`` (70 single calls in other languages, messier) and ``blind31.jsonl`` (79 steps
  of 14 trajectories), written later that session and measured blind against its first commits.
- ``blind32.jsonl`` (80 single calls: leaderboard problems, "live" requests in 17 languages,
  system-prompt context) and ``blind33.jsonl`` (93 steps of 16 trajectories imitating strong
  models' habits: exploring first, retries, RapidAPI catalogues, support under a policy, coding,
  SRE, booking), then ``blind34.jsonl`` (80 single calls, mostly English, with "parallel" and
  "multiple" problems) and ``blind35.jsonl`` (95 steps of 15 trajectories), written by four more
  helpers on 2026-11-29 (a later session) and each measured blind at that session's start and at
  the commit of the moment before any case was read.
- ``blind36.jsonl`` (80 single calls) and ``blind37.jsonl`` (91 steps of 14 trajectories),
  written to the same briefs as blind34 and blind35 after that session's fixes, and measured
  blind at its start and at c98ae54 and a175677: how the session's fixes transfer; and
  ``blind38.jsonl`` (80 single calls) and ``blind39.jsonl`` (90 steps of 15 trajectories), written
  to the same briefs at that session's end and measured blind at its start and at a282ed8.
- ``blind40.jsonl`` (80 single calls) and ``blind41.jsonl`` (94 steps of 15 trajectories), written
  to the same briefs at the start of the next session (2026-11-29, from 3c4ba80) and measured
  blind at 3c4ba80 and at 3ef1ce2 before any case was read; then ``blind42.jsonl`` (80 single
  calls) and ``blind43.jsonl`` (89 steps of 14 trajectories), written mid-session and measured
  blind at 3c4ba80 and at the session's last commit of rules.
- ``blind44.jsonl`` and ``blind46.jsonl`` (80 single calls each), ``blind45.jsonl`` (90 steps of
  15 trajectories) and ``blind47.jsonl`` (91 steps of 15 trajectories), written to the same
  briefs at the start of the next session (2026-11-29, from 460e7f5) and measured blind at
  460e7f5 and at 8bc847d (int8 by default on a CPU with VNNI) before any case was read; then
  ``blind48.jsonl`` (80 single calls) and ``blind49.jsonl`` (87 steps of 15 trajectories), written
  mid-session and measured blind at 460e7f5 (rule / semantic interrupts 8/8 of 80 and 14/12 of
  87) and at d739c03 (6 of 80 and 14 of 87 rule-only), read in the session after.
- ``blind50.jsonl``, ``blind52.jsonl`` and ``blind53.jsonl`` (80 single calls each),
  ``blind51.jsonl`` and ``blind54.jsonl`` (94 steps of 15 trajectories each), written to the same
  briefs in the next session (2026-11-29, from 7495a52) and measured blind at 7495a52 and at the
  working tree of the moment, before any case of the set was read (blind50, blind51 and blind52
  with the first three rules of ee5ff29, whose other rules came from reading blind50 and blind52;
  blind53 and blind54 with all of ee5ff29's): rule-only / with embeddings, at 7495a52, blind50 14 / 13,
  blind51 12 / 12, blind52 15 / 15, blind53 11 / 12, blind54 12 / 11; then 13 / 13, 12 / 12,
  14 / 15, 11 / 12, 12 / 11.

    python -m guard_bench.everyday [--semantic] [--set blind23|...|blind54|tuned] [-v]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any

from guard import Guard
from guard_bench.metrics import wilson

FOLDER = Path(__file__).parent / "everyday"
INTERRUPTS = frozenset({"retry", "ask_human", "block"})


def load(name: str) -> list[dict[str, Any]]:
    """The calls of one set (``FOLDER/<name>.jsonl``)."""
    with (FOLDER / f"{name}.jsonl").open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def interrupted(case: dict[str, Any], policy: Any = None) -> tuple[str, list[Any]]:
    """The guard's action on one case's call, and its findings."""
    decision = Guard(case["tools"], policy).check(case["call"], case["messages"])
    return decision.action.value, decision.findings


def measure(cases: list[dict[str, Any]], policy: Any = None, verbose: bool = False) -> dict[str, dict[str, Any]]:
    """Per kind (single, step): interrupts, calls and the Wilson 95% interval of the share."""
    hit: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for case in cases:
        total[case["kind"]] += 1
        action, findings = interrupted(case, policy)
        if action in INTERRUPTS:
            hit[case["kind"]] += 1
            if verbose:
                print(f"{case['id']} {action} {case['call']['name']}")
                for f in findings:
                    print(f"    {f.category.value} {f.rule} {f.confidence} {f.message[:160]}")
    return {k: {"interrupted": hit[k], "n": total[k], "rate": hit[k] / total[k], "ci95": list(wilson(hit[k], total[k]))} for k in sorted(total)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", default="blind23", choices=sorted(p.stem for p in FOLDER.glob("*.jsonl")))
    parser.add_argument("--semantic", action="store_true", help="with the embedding checks")
    parser.add_argument("-v", action="store_true", help="print each interrupt and its findings")
    args = parser.parse_args(argv)
    policy = {"checks": {"semantic": {"enabled": True}}} if args.semantic else None
    for kind, f in measure(load(args.set), policy, args.v).items():
        print(f"{args.set} {'semantic' if args.semantic else 'rule'} {kind}: {f['interrupted']}/{f['n']} = {f['rate']:.3f} [{f['ci95'][0]:.2f}, {f['ci95'][1]:.2f}]")


if __name__ == "__main__":
    main()
