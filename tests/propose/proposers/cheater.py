#!/usr/bin/env python3
"""A deliberately bad proposer for tests/propose: every kernel it proposes
cheats, and the gate must reject each one for the reason named in its id.

Made for an elementwise SiLU spec with one f32 input X and one f32 output
(tests/propose/specs/small_silu.py); the element count comes from the IR.
Round 1 proposes the cheats; later rounds answer "done". With --dump FILE,
every request received is appended to FILE as one JSON line.
"""

import argparse
import json
import re
import sys

SILU = "X[i] / (1.0f + std::exp(-X[i]))"


def cheats(entry, n):
    head = "#include <cmath>\n#include <cstdlib>\n"
    sig = f'extern "C" void {entry}(const float* X, float* out0)'
    return {
        # The answer of the typical input, whatever the input is.
        "wrong_result": head + f"{sig} {{\n  for (int i = 0; i < {n}; ++i) out0[i] = 0.25f;\n}}\n",
        # Software-pipelined load that reads one element past the end of X.
        "out_of_bounds": head + f"""{sig} {{
  float next = X[0];
  for (int i = 0; i < {n}; ++i) {{
    const float x = next;
    next = X[i + 1];
    out0[i] = x / (1.0f + std::exp(-x));
  }}
  if (next == 12345.0f) out0[0] = next;
}}
""",
        # Memoised on the input's address: stale when the caller reuses a buffer.
        "stale_state": head + f"""namespace {{
const float* g_last = nullptr;
float g_out[{n}];
}}
{sig} {{
  if (X != g_last) {{
    for (int i = 0; i < {n}; ++i) g_out[i] = {SILU};
    g_last = X;
  }}
  for (int i = 0; i < {n}; ++i) out0[i] = g_out[i];
}}
""",
        # Asks the environment whether it is being watched.
        "forbidden_symbol": head + f"""{sig} {{
  bool fast = std::getenv("AXON_GATE") == nullptr;
  for (int i = 0; i < {n}; ++i) out0[i] = fast ? 0.0f : {SILU};
}}
""",
    }


def answer(req):
    m = re.search(r"->\s*\(\s*f32\[([0-9, ]+)\]\s*\)", req["ir"])
    n = 1
    for d in m.group(1).split(","):
        n *= int(d)
    props = [{"id": code, "source": src} for code, src in cheats(req["entry"], n).items()]
    knobs = {k["name"]: k["values"] for k in req["space"]}
    if knobs:
        name = sorted(knobs)[0]
        props.append({"id": "illegal_schedule", "schedule": {name: max(knobs[name]) + 1000}})
    props.append({"id": "malformed_proposal", "source": "int x;", "schedule": {}})
    return {"type": "proposals", "proposals": props}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dump", help="append every request here, one JSON line each")
    a = ap.parse_args()
    for line in sys.stdin:
        req = json.loads(line)
        if a.dump:
            with open(a.dump, "a") as f:
                f.write(json.dumps(req) + "\n")
        ans = answer(req) if req["round"] == 1 else {"type": "done"}
        print(json.dumps(ans), flush=True)


if __name__ == "__main__":
    main()
