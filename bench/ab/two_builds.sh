#!/usr/bin/env bash
# Times the kernels two axon builds emit for the same schedules, alternately,
# with `axon verify` (the gate's timing: cold inputs, median of its runs),
# so that a code-generator change is measured side by side in one run.
#
#   bench/ab/two_builds.sh OLD_AXON NEW_AXON ROUNDS SPEC:SCHEDULE [SPEC:SCHEDULE ...]
#
# SCHEDULE is a JSON schedule or an optimize report.json. With a report of a
# kernel found on a rewritten graph, give the rewritten form as its own spec
# (bench/ab/gelu_rewritten.py for s5) and the original as VERIFY_SPEC:
# SPEC:SCHEDULE:VERIFY_SPEC. Each line printed: round, spec, build, the
# verdict and the time line of `axon verify`. Builds: a worktree of the old
# commit, e.g. `git worktree add /tmp/old <commit> && cmake -S /tmp/old -B
# /tmp/old/build -G Ninja -DCMAKE_BUILD_TYPE=Release && cmake --build
# /tmp/old/build --target axon`. AB_VERIFY=own times each kernel with its own
# build's `axon verify` (for a change to how the gate compiles); the default,
# AB_VERIFY=new, times both with NEW_AXON's.
set -euo pipefail
old="$1" new="$2" rounds="$3"
shift 3
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for b in old new; do
  bin="$old"; [ "$b" = new ] && bin="$new"
  i=0
  for item in "$@"; do
    IFS=: read -r spec schedule _ <<<"$item"
    "$bin" compile "$spec" -o "$work/$b/$i" --schedule "$schedule" >/dev/null
    i=$((i + 1))
  done
done
for round in $(seq 1 "$rounds"); do
  i=0
  for item in "$@"; do
    IFS=: read -r spec schedule verify_spec <<<"$item"
    verify_spec="${verify_spec:-$spec}"
    for b in old new; do
      verifier="$new"
      [ "${AB_VERIFY:-new}" = own ] && [ "$b" = old ] && verifier="$old"
      line=$("$verifier" verify "$verify_spec" "$work/$b/$i/kernel.cpp" --no-sanitizer --seed 5 2>&1 |
        grep -E '^(time|accept|reject)' | sed 's/; roofline floor.*//' | tr '\n' ' ')
      echo "$round $(basename "$verify_spec" .py) $b $line"
    done
    i=$((i + 1))
  done
done
