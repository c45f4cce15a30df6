#!/usr/bin/env bash
# What each instrument costs a whole `grok run --preset random_mul`: the command with the preset's probes,
# with the Hessian off, with every probe off, and with every probe off and evaluations every 1,000 steps
# (the defaults of bench/ab.py --mode command), REPS rounds with the variants alternating; on CUDA also the
# eager step (train.cuda_graph = false). Training steps/s from each run's summary.json, and its wall time.
#
#   DEVICE=cuda STEPS=3000 REPS=2 bench/command_instruments.sh [extra grok run options, e.g. --set train.threads=1]
#
# One line per run, then the medians, on stdout and in $OUT/instruments.txt (OUT defaults to
# ./instruments). PYTHON: the interpreter (default .venv/bin/python, else python3). A run that takes
# more than RUN_TIMEOUT seconds (default 300) is ended and shows rc 124. TREE=DIR runs another tree's code
# (e.g. the previous release, `git archive REF | tar -x -C DIR`, with a grok_presets link to its presets):
# the commands start in DIR, so `python -m` imports DIR's engine, grok_tui and presets.
set -u -o pipefail
cd "$(dirname "$0")/.."
if [ -n "${TREE:-}" ]; then
    [ -d "$TREE/engine" ] || { echo "error: TREE=$TREE has no engine/ (not a grok-tui tree)" >&2; exit 2; }
    [ -e "$TREE/grok_presets" ] || ln -s presets "$TREE/grok_presets"
    if [ -z "${PYTHON:-}" ] && [ -x .venv/bin/python ]; then PYTHON="$PWD/.venv/bin/python"; fi
    cd "$TREE"
fi
OUT="${OUT:-$PWD/instruments}"; mkdir -p "$OUT"; OUT="$(cd "$OUT" && pwd)"
if [ -n "${PYTHON:-}" ]; then PY="$PYTHON"; elif [ -x .venv/bin/python ]; then PY=.venv/bin/python; else PY=python3; fi
DEVICE="${DEVICE:-cuda}"; STEPS="${STEPS:-3000}"; REPS="${REPS:-2}"
NOPROBE=(--set probe.hessian_every=0 --set probe.rank_every=0 --set probe.grad_every=0 --set probe.fourier_every=0)
LOG="$OUT/instruments.txt"; : > "$LOG"
run() {  # NAME ARGS...: one whole command, one line
    local name="$1"; shift
    local dir="$OUT/runs/$name"; rm -rf "$dir"
    local t0 t1 rc
    t0=$(date +%s.%N)
    timeout -k 5 "${RUN_TIMEOUT:-300}" "$PY" -m grok_tui run --preset random_mul --device "$DEVICE" --steps "$STEPS" -q --out "$dir" "$@" > /dev/null 2> "$OUT/last.err"
    rc=$?; t1=$(date +%s.%N)
    "$PY" - "$dir" "$name" "$rc" "$t0" "$t1" <<'PYEOF' | tee -a "$LOG"
import json, pathlib, sys
d, name, rc, t0, t1 = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5])
s = next((json.loads(p.read_text()) for p in pathlib.Path(d).glob("*/summary.json")), {})
print(f"{name:10s} rc {rc} wall {t1 - t0:6.2f} s  steps {s.get('steps')}  training {s.get('wall_s')} s  "
      f"{s.get('steps_per_s')} steps/s  graph {s.get('cuda_graph', '-')!r}  {s.get('status')}")
PYEOF
    [ "$rc" = 0 ] || tail -3 "$OUT/last.err" | tee -a "$LOG"
}
for rep in $(seq "$REPS"); do
    run full "$@"
    run nohess "$@" --set probe.hessian_every=0
    run noprobe "$@" "${NOPROBE[@]}"
    run eval1k "$@" "${NOPROBE[@]}" --set train.eval_every=1000
    case "$DEVICE" in cuda*) run eager "$@" --set train.cuda_graph=false ;; esac
done
"$PY" - "$LOG" <<'PYEOF' | tee -a "$LOG"
import re, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    m = re.match(r"(\w+)\s+rc 0 .* training ([\d.]+) s\s+([\d.]+) steps/s", line)
    if m:
        runs.setdefault(m[1], []).append(float(m[3]))
for name, r in runs.items():
    print(f"median {name:10s} {statistics.median(r):8.1f} steps/s  ({min(r):.1f}-{max(r):.1f}, {len(r)} runs)")
PYEOF
rm -rf "$OUT/runs" "$OUT/last.err"
