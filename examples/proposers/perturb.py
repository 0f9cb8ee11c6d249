#!/usr/bin/env python3
"""An example proposer for `axon optimize --proposer` (docs/proposers.md).

It reads one request per line on stdin and answers one line on stdout, with
two kinds of proposal:

- schedule: the current best's schedule (or the space's defaults when the
  best has none) with one knob moved to another of its legal values from
  "space"; never a schedule it already proposed;
- source: the current best's source with a GCC optimisation pragma put in
  front of it (`#pragma GCC optimize("unroll-loops")`, "O3", ...), a change
  that the compiler sometimes rewards and sometimes does not.

It learns from "history": a knob whose moves keep getting rejected or
losing is tried less often. Python standard library only; its own
randomness comes from --seed (axon never shares its seeds).

    axon optimize SPEC -o out --proposer "python3 examples/proposers/perturb.py"
    ... --proposer "python3 examples/proposers/perturb.py --per-round 3 --kinds schedule"
"""

import argparse
import json
import random
import sys

PRAGMAS = ["unroll-loops", "O3", "O3,unroll-loops", "no-tree-vectorize", "Os"]


def log(msg):
    print(f"perturb.py: {msg}", file=sys.stderr, flush=True)


class Perturber:
    def __init__(self, seed, per_round, kinds):
        self.rng = random.Random(seed)
        self.per_round = per_round
        self.kinds = kinds
        self.proposed = set()        # schedules already proposed (as sorted tuples)
        self.pragmas_tried = set()   # (best id, pragma)
        self.knob_losses = {}        # knob -> times a move of it lost or was rejected
        self.moved = {}              # proposal id -> knob it moved

    def learn(self, history):
        self.knob_losses = {}
        for h in history:
            knob = self.moved.get(h["id"])
            if knob is not None and not h.get("winner"):
                self.knob_losses[knob] = self.knob_losses.get(knob, 0) + 1

    def schedule_proposal(self, req, n):
        space = [k for k in req["space"] if len(k["values"]) > 1]
        if not space:
            return None
        base = req["best"]["schedule"] or {k["name"]: k["values"][0] for k in req["space"]}
        for _ in range(64):
            # Knobs that lost often are drawn less often.
            weights = [1.0 / (1 + self.knob_losses.get(k["name"], 0)) for k in space]
            knob = self.rng.choices(space, weights=weights)[0]
            others = [v for v in knob["values"] if v != base.get(knob["name"])]
            if not others:
                continue
            s = dict(base)
            s[knob["name"]] = self.rng.choice(others)
            key = tuple(sorted(s.items()))
            if key in self.proposed:
                continue
            self.proposed.add(key)
            pid = f"r{req['round']}-s{n}-{knob['name']}={s[knob['name']]}"
            self.moved[pid] = knob["name"]
            return {"id": pid, "schedule": s}
        return None

    def source_proposal(self, req, n):
        best = req["best"]
        left = [p for p in PRAGMAS if (best["id"], p) not in self.pragmas_tried]
        if not left:
            return None
        pragma = self.rng.choice(left)
        self.pragmas_tried.add((best["id"], pragma))
        source = f'#pragma GCC optimize("{pragma}")\n' + best["source"]
        return {"id": f"r{req['round']}-p{n}-{pragma}", "source": source}

    def answer(self, req):
        self.learn(req.get("history", []))
        want = min(self.per_round, req.get("max_proposals", self.per_round))
        proposals = []
        kinds = list(self.kinds)
        # Alternate the kinds across rounds so that one proposal per round
        # still exercises both.
        start = (req["round"] - 1) % len(kinds)
        kinds = kinds[start:] + kinds[:start]
        for n in range(want * 4):
            if len(proposals) >= want:
                break
            kind = kinds[n % len(kinds)]
            p = self.schedule_proposal(req, n) if kind == "schedule" else self.source_proposal(req, n)
            if p is not None:
                proposals.append(p)
        if not proposals:
            return {"type": "done"}
        return {"type": "proposals", "proposals": proposals}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0, help="this proposer's own randomness")
    ap.add_argument("--per-round", type=int, default=2, help="proposals per round")
    ap.add_argument("--kinds", default="schedule,source", help="comma list of schedule, source")
    a = ap.parse_args()
    kinds = [k for k in a.kinds.split(",") if k in ("schedule", "source")] or ["schedule"]
    p = Perturber(a.seed, max(1, a.per_round), kinds)
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        if req.get("type") != "request":
            continue
        ans = p.answer(req)
        last = [h for h in req["history"] if h["round"] == req["round"] - 1]
        if last:
            acc = sum(1 for h in last if h["verdict"] == "accepted")
            log(f"round {req['round']}: {acc} of {len(last)} proposals of round {req['round'] - 1} accepted; "
                f"best {req['best']['id']} {req['best']['time_ms']:.4g} ms ({req['best']['timed_by']})")
        sys.stdout.write(json.dumps(ans) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
