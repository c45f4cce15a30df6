#!/usr/bin/env bash
# The GPU path, end to end, in one script (under 8 minutes on one GPU):
#   doctor, a CUDA `grok run --preset adamlr_mul`, the step as a CUDA graph against eager
#   (bench/gpu_speed.py graph), `grok bench`, bench/gpu_speed.py many, a batched `grok sweep --preset
#   fig6_optimizers --seeds 1` checked member by member against solo runs (bench/gpu_agree.py compare),
#   one run's step under the profiler (bench/gpu_speed.py profile), what each instrument costs a whole
#   `grok run` (bench/command_instruments.sh), and the TUI on a live run under tmux
#   for 20 s with a screen capture. GPU_CHECK_FULL=1 adds where a batched member and its solo run
#   part, in float32 and float64 (bench/gpu_agree.py divergence, about 3 minutes more).
#
#   bench/gpu_check.sh                  # on a GPU box (device cuda)
#   bench/gpu_check.sh --device cpu     # dry run with small sizes (under 3 minutes), anywhere
#
# --paper: the measurement of the whole paper on one GPU instead, in one call under BUDGET seconds
# (default 560; bench/gpu_check_paper.sh): doctor; the members per stacked model each of the paper's
# sweeps gets on this card (bench/gpu_speed.py batches); `grok sweep --preset paper` with all the time but
# RESERVE seconds (default 240), `grok report PAPER_DIR` (the whole wall time) and each claim's verdicts
# (bench/gpu_agree.py verdicts); the recorded step against eager on the presets that now record (adaptive
# c, warm-up and cosine; bench/gpu_speed.py graph --only early); what the instruments cost a whole run, in
# this tree and, with REF=COMMIT (exported with git archive into .ref-trees/) or REF_TREE=DIR, in the
# previous release's (bench/command_instruments.sh, TREE=); TF32's effect on steps to 95% val, one
# sweep (TF32_PRESET, default fig6_optimizers, TF32_SEEDS seeds) run with train.tf32 off and on and
# paired by member (bench/gpu_agree.py tf32). The paper directory is PAPER_DIR (default ./gpu-check/paper,
# outside $OUT/runs): a paper the budget cut short is resumed by the next `--paper` call (`grok sweep
# --resume`). With --device cpu the paper is shrunk (PAPER_TINY=1: one seed, each member stopped at its
# second evaluation) and the budget is an hour, so the dry run ends on a loaded 2-core machine.
# GPU_CHECK_ONLY="doctor paper graph instruments tf32" runs only the named steps of --paper.
#
# Each step is ended after STEP_TIMEOUT seconds (default 240) and the check goes on with the next, so
# one hung step cannot take the whole time a GPU is lent for.
# It prints a table and writes it to $OUT/gpu_check.txt, with every step's log beside it
# (OUT defaults to ./gpu-check). Python: $PYTHON, else .venv/bin/python, else python3.
# On a GPU box with its own python3 and CUDA torch but no package index, bring the tree with a
# `wheels/` folder made by `make wheels` where an index is reachable; the script then installs
# every dependency but torch from wheels/ only into .gpu-site, and runs the tree from PYTHONPATH
# beside the box's own torch (see the install step below).
set -u -o pipefail

DEVICE=cuda
MODE=check
while [ $# -gt 0 ]; do
    case "$1" in
        --device) DEVICE="$2"; shift 2 ;;
        --device=*) DEVICE="${1#--device=}"; shift ;;
        --paper) MODE=paper; shift ;;
        -h|--help) sed -n '2,36p' "$0"; exit 0 ;;
        *) echo "error: unknown argument $1 (use --device cuda|cuda:N|cpu, --paper)" >&2; exit 2 ;;
    esac
done

cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"  # bench/*.py import this tree's engine, whatever is installed
OUT="${OUT:-$PWD/gpu-check}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
RUNS="$OUT/runs"
rm -rf "$RUNS"
T0=$SECONDS

if [ -n "${PYTHON:-}" ]; then PY="$PYTHON"
elif [ -x .venv/bin/python ]; then PY=.venv/bin/python
else PY=python3
fi

deps_ok() { "$1" -c "import torch, textual, plotext, typer, rich, numpy, grok_tui.cli, grok_presets" 2>/dev/null; }

if ! deps_ok "$PY"; then
    echo "== installing grok-tui without a package index (torch: the box's own)"
    if [ ! -d wheels ]; then
        echo "error: $PY cannot import the project's dependencies and there is no wheels/ folder (make wheels)" >&2
        exit 2
    fi
    # Beside the box's interpreter, not in a venv of it: where that python3 is itself a virtual
    # environment (as on the H200 this was first run on), `venv --system-site-packages` would see
    # the base interpreter's packages and not the box's torch. So the wheels go into .gpu-site on
    # PYTHONPATH; numpy only where the box has none; the presets through a grok_presets link.
    SITE="$PWD/.gpu-site"
    WHEELS=$(ls wheels/*.whl | grep -v -e '/setuptools-')
    "$PY" -c "import numpy" 2>/dev/null && WHEELS=$(echo "$WHEELS" | grep -v -e '/numpy-')
    # shellcheck disable=SC2086
    "$PY" -m pip install -q --no-index --no-deps --no-compile --upgrade --target "$SITE" $WHEELS \
        || { echo "error: installing from wheels/ failed" >&2; exit 2; }
    mkdir -p "$SITE/.presets" && ln -sfn "$PWD/presets" "$SITE/.presets/grok_presets"
    export PYTHONPATH="$SITE:$SITE/.presets:$PWD${PYTHONPATH:+:$PYTHONPATH}"
    deps_ok "$PY" || { echo "error: still cannot import the dependencies after installing from wheels/" >&2; exit 2; }
fi

GROK=("$PY" -m grok_tui)
if [ "$DEVICE" = cpu ]; then  # the dry run: every step, small sizes
    RUN_ARGS=(--steps 100); BENCH_ARGS=(--quick --many 1,4); MANY_ARGS=(--sizes 1,4 --steps 10 --reps 1)
    SWEEP_ARGS=(--seeds 1 --steps 20 --workers 2); TUI_ARGS=(--steps 100000)
    DIV_ARGS=(--steps 40 --every 20 --members 2 --quick); PROF_ARGS=(--steps 10 --warmup 5)
    GRAPH_ARGS=(--steps 20 --reps 1 --pairs 1 --run-steps 50); INSTR_ENV=(STEPS=20 REPS=1)
else
    RUN_ARGS=(); BENCH_ARGS=(); MANY_ARGS=(--sizes 1,8,32,128 --steps 20 --reps 3)
    SWEEP_ARGS=(--seeds 1); TUI_ARGS=(); GRAPH_ARGS=()
    DIV_ARGS=(--steps 1000 --every 20 --members 4); PROF_ARGS=(--steps 200 --warmup 100)
    INSTR_ENV=(STEPS=3000 REPS=2)
fi

ROWS=()
row() { ROWS+=("$(printf '%-28s %s' "$1" "$2")"); }
STEP_TIMEOUT="${STEP_TIMEOUT:-240}"  # seconds per step: a hung step ends, and the check goes on to the next
step() {  # step NAME LOG CMD...: run, keep the log, say how long it took
    local name="$1" log="$OUT/$2" t=$SECONDS rc
    shift 2
    echo "== $name: $*"
    timeout -k 10 "$STEP_TIMEOUT" "$@" >"$log" 2>&1
    rc=$?
    [ "$rc" = 124 ] && echo "   timed out after $STEP_TIMEOUT s (STEP_TIMEOUT)" >>"$log"
    tail -n 40 "$log"
    echo "   ($((SECONDS - t)) s, exit $rc)"
    return $rc
}
checked() {  # checked NAME LOG PATTERN CMD...: a step, then a row per line of its log matching PATTERN
    local name="$1" log="$2" pattern="$3"
    shift 3
    if step "$name" "$log" "$@"; then
        while IFS= read -r line; do row "$name" "$(echo "$line" | sed 's/  */ /g')"; done < <(grep -E "$pattern" "$OUT/$log")
    else
        row "$name" "FAILED ($log)"
    fi
}
json() { "$PY" -c "import json, sys; d = json.load(open(sys.argv[1])); print($1)" "$2" 2>/dev/null || echo "?"; }

ONLY="${GPU_CHECK_ONLY:-}"
want() { [ -z "$ONLY" ] || [[ " $ONLY " == *" $1 "* ]]; }

# 1 the machine
if ! want doctor; then :
elif step doctor doctor.log "${GROK[@]}" doctor --device "$DEVICE" --out "$RUNS"; then
    row "doctor" "$(grep -E '^(torch|CUDA|device|matmul) ' "$OUT/doctor.log" | sed 's/  */ /g' | paste -sd ';' -)"
else
    row "doctor" "FAILED (doctor.log)"
fi

if [ "$MODE" = paper ]; then
    # shellcheck source=bench/gpu_check_paper.sh
    . bench/gpu_check_paper.sh
else

# 2 one run end to end
if step "run adamlr_mul" run.log "${GROK[@]}" run --preset adamlr_mul --device "$DEVICE" --out "$RUNS/run" -q "${RUN_ARGS[@]}"; then
    S=$(ls -d "$RUNS"/run/*/ | head -n 1)
    row "run adamlr_mul" "$(json "f\"{d['steps']} steps, {d['steps_per_s']:.1f} steps/s, 95% val at step {d['generalized_step'] or '-'}, {d['status']}, {d['wall_s']:.1f} s\"" "$S/summary.json")"
else
    row "run adamlr_mul" "FAILED (run.log)"
fi

# 2b the step as a CUDA graph against the eager step
checked "cuda graph" graph.log '^(early|one run|many|grok run random)' "$PY" bench/gpu_speed.py graph --device "$DEVICE" \
    "${GRAPH_ARGS[@]}"

# 2c what each instrument costs the whole command (probes, evaluations, the recorded step)
checked "instruments" instruments.log '^median' env "${INSTR_ENV[@]}" DEVICE="$DEVICE" PYTHON="$PY" \
    OUT="$OUT/instruments" bench/command_instruments.sh

# 3 engine vs peer, share of the fp32 ceiling
if step "grok bench" bench.log "${GROK[@]}" bench --device "$DEVICE" "${BENCH_ARGS[@]}"; then
    row "bench ceiling" "$(grep -m1 'matmul ceiling' "$OUT/bench.log" | sed 's/  */ /g')"
    row "bench peer" "$(grep -m1 '^2 peer' "$OUT/bench.log" | sed 's/  */ /g')"
    row "bench engine" "$(grep -m1 '^3 engine' "$OUT/bench.log" | sed 's/  */ /g')"
    row "bench engine/peer" "$(grep -m1 'engine / peer' "$OUT/bench.log" | sed 's/^ *//; s/ *(.*//')"
else
    row "grok bench" "FAILED (bench.log)"
fi

# 4 many seeds as one model
checked "bench_many" many.log '^(single|N = )' "$PY" bench/gpu_speed.py many --device "$DEVICE" "${MANY_ARGS[@]}"

# 5 a batched sweep, each member against a solo run of the same seed
t=$SECONDS
if step "sweep fig6_optimizers" sweep.log "${GROK[@]}" sweep --preset fig6_optimizers --device "$DEVICE" --out "$RUNS/sweep" -q "${SWEEP_ARGS[@]}"; then
    row "sweep fig6_optimizers" "$(grep -m1 '^sweep ' "$OUT/sweep.log") in $((SECONDS - t)) s"
    G=$(ls -d "$RUNS"/sweep/*-sweep | head -n 1)
    step "sweep members vs solo" compare.log "$PY" bench/gpu_agree.py compare "$G"
    row "members vs solo, early" "$(grep -m1 '^early check' "$OUT/compare.log" | sed 's/^early check, //')"
    row "members vs solo, outcomes" "$(grep -m1 '^outcomes' "$OUT/compare.log" | sed 's/^outcomes, //')"
else
    row "sweep fig6_optimizers" "FAILED (sweep.log)"
fi

# 6 where batched and solo part (rounding amplified, or a bug), in float32 and float64
for dt in $([ -n "${GPU_CHECK_FULL:-}" ] && echo float32 float64); do
    checked "divergence $dt" "divergence_$dt.log" '^(solo|member|batched|deterministic)' "$PY" bench/gpu_agree.py divergence \
        --device "$DEVICE" --dtype "$dt" "${DIV_ARGS[@]}"
done

# 7 one run's step under the profiler: host time against kernel time
checked "profile" profile.log '^(adamlr|host|kernel)' "$PY" bench/gpu_speed.py profile --device "$DEVICE" "${PROF_ARGS[@]}"

# 8 the TUI on a live run, 20 s under tmux, then a screen capture
if command -v tmux >/dev/null; then
    SESSION="gpu-check-$$"
    echo "== TUI under tmux for 20 s"
    tmux new-session -d -s "$SESSION" -x 160 -y 48 \
        "${GROK[*]} tui --preset adamlr_mul --device $DEVICE --out $RUNS/tui ${TUI_ARGS[*]}"
    sleep 20
    tmux capture-pane -p -t "$SESSION" >"$OUT/tui_capture.txt" 2>/dev/null
    tmux send-keys -t "$SESSION" q 2>/dev/null
    sleep 2
    tmux kill-session -t "$SESSION" 2>/dev/null
    cat "$OUT/tui_capture.txt"
    STATUS=$(grep -m1 -oE '(RUNNING|FINISHED|PAUSED|STARTING)[^│]*steps/s' "$OUT/tui_capture.txt" | sed 's/  */ /g')
    row "TUI 20 s (tmux)" "${STATUS:-no status line in tui_capture.txt}"
else
    row "TUI 20 s (tmux)" "skipped: tmux is not installed"
fi

fi  # MODE

{
    echo "gpu_check$([ "$MODE" = paper ] && echo " --paper") --device $DEVICE, $(date -u '+%Y-%m-%d %H:%M UTC'), total $((SECONDS - T0)) s"
    printf '%s\n' "${ROWS[@]}"
} >"$OUT/gpu_check.txt"
echo
cat "$OUT/gpu_check.txt"
