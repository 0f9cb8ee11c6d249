#!/usr/bin/env bash
# Compiles SPEC at its default schedule with every *.threads knob at 1 (and
# EXTRA_JSON's knobs where that schedule has them), for timing two builds'
# kernels one thread each with bench/ab/time_kernels.py on a loaded host:
#
#   bench/ab/one_thread.sh AXON SPEC OUT_DIR [EXTRA_JSON]
#
# e.g. bench/ab/one_thread.sh build/axon bench/workloads/m2_matmul_bias_gelu.py D/pass '{"k0.gemm.epilogue":0}'.
# Exit 3 (OUT_DIR removed) when EXTRA_JSON names knobs and the schedule has none of them.
set -euo pipefail
axon="$1" spec="$2" out="$3" extra="${4:-{\}}"
sched=$("$axon" compile "$spec" -o "$out" --schedule '{}' --json | python3 -c "import json,sys; print(json.dumps(json.load(sys.stdin)['schedule']))")
one=$(python3 -c "
import json, sys
s, e = json.loads(sys.argv[1]), json.loads(sys.argv[2])
s = {k: (1 if k.endswith('threads') else v) for k, v in s.items()}
hit = [k for k in e if k in s]
if e and not hit:
    print('NONE'); sys.exit()
s.update({k: e[k] for k in hit}); print(json.dumps(s))" "$sched" "$extra")
if [ "$one" = NONE ]; then rm -rf "$out"; exit 3; fi
"$axon" compile "$spec" -o "$out" --schedule "$one" | tail -1
