#!/usr/bin/env python3
"""Proposers that break the protocol, for tests/propose: `misbehave.py MODE`.

crash     exits with status 3 as soon as it has read the request
garbage   answers a line that is not JSON
malformed answers JSON that is not a message of the protocol
hang      reads the request and never answers (writes its pid to --pid-file)
deaf      never reads its input and never answers
"""

import argparse
import json
import os
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode")
    ap.add_argument("--pid-file")
    a = ap.parse_args()
    if a.pid_file:
        with open(a.pid_file, "w") as f:
            f.write(str(os.getpid()))
    if a.mode == "deaf":
        while True:
            time.sleep(1)
    line = sys.stdin.readline()
    json.loads(line)
    if a.mode == "crash":
        print("misbehave.py: crashing on purpose", file=sys.stderr)
        sys.exit(3)
    if a.mode == "garbage":
        print("here are some kernels, I think", flush=True)
    elif a.mode == "malformed":
        print(json.dumps({"type": "proposals", "proposals": "kernel.cpp"}), flush=True)
    elif a.mode == "hang":
        while True:
            time.sleep(1)
    # Waits for the end of the conversation like a well-behaved proposer.
    for _ in sys.stdin:
        pass


if __name__ == "__main__":
    main()
