# The whole paper on one GPU: the steps of `bench/gpu_check.sh --paper`, sourced by it (its step, row,
# json, want, PY, GROK, OUT, RUNS, DEVICE and T0). Every step has its own timeout inside BUDGET seconds
# for the whole call. The paper goes first, with all of it but RESERVE seconds (the other steps' estimate
# on one GPU), and is resumed by the next call where that was too little.
# Seconds: the whole call, and each step's cap (the GPU's, sized from the H200's runs; the CPU dry run's
# are wide, since a loaded 2-core machine runs these steps many times slower).
if [ "$DEVICE" = cpu ]; then BUDGET="${BUDGET:-3600}"; CAPS=(600 900 900); else BUDGET="${BUDGET:-560}"; CAPS=(90 150 150); fi
RESERVE="${RESERVE:-$([ "$DEVICE" = cpu ] && echo 1200 || echo 240)}"  # for the steps after the paper
PAPER_DIR="${PAPER_DIR:-$PWD/gpu-check/paper}"  # git-ignored, outside $OUT/runs: kept for a resume
TF32_PRESET="${TF32_PRESET:-fig6_optimizers}"
if [ "$DEVICE" = cpu ]; then  # the dry run: every step, tiny sizes
    PAPER_TINY="${PAPER_TINY:-1}"; TF32_SEEDS="${TF32_SEEDS:-1}"; TF32_ARGS=(--steps 40 --workers 2)
    INSTR_ENV=(STEPS=20 REPS=1); PAPER_ARGS=(--workers 2); BATCH_ARGS=(--workers 2)
else
    PAPER_TINY="${PAPER_TINY:-}"; TF32_SEEDS="${TF32_SEEDS:-3}"; TF32_ARGS=()
    INSTR_ENV=(STEPS=3000 REPS=1); PAPER_ARGS=(); BATCH_ARGS=()
fi
# One seed, every member stopped at its second evaluation (target 0, patience 1): the paper's whole
# machinery (20 sweeps, the record, the report) in a few minutes on a CPU, nothing of its science.
[ -n "$PAPER_TINY" ] && PAPER_ARGS+=(--seeds 1 --set train.target_val_acc=0 --set train.patience=1 --set train.eval_every=10)
left() { local t=$((BUDGET - (SECONDS - T0))); echo $((t > 1 ? t : 1)); }
cap() { local t; t=$(left); echo $((t < $1 ? t : $1)); }  # a step's timeout: at most what is left
rest() { local t=$(($(left) - RESERVE)); echo $((t > 1 ? t : 1)); }  # the paper's: what the other steps leave

# 2 the whole paper, with the time left but RESERVE seconds for the other steps; then its record and each
# claim's verdicts
if want paper; then
    # the members per stacked model each sweep gets on this card, as the sweep plans them (bench/gpu_speed.py batches)
    if STEP_TIMEOUT=$(cap 120) step "paper batches" paper_batches.log "$PY" bench/gpu_speed.py batches --device "$DEVICE" \
        "${BATCH_ARGS[@]}"; then
        while IFS= read -r line; do row "paper batches" "$line"; done < "$OUT/paper_batches.log"
    else
        row "paper batches" "FAILED (paper_batches.log)"
    fi
    P=$(ls -d "$PAPER_DIR"/*/ 2>/dev/null | head -n 1)
    if [ -n "$P" ] && [ -f "$P/paper.json" ]; then  # an earlier call's paper: go on with it
        STEP_TIMEOUT=$(rest) step "paper (resumed)" paper.log "${GROK[@]}" sweep --resume "$P" -q
    else
        STEP_TIMEOUT=$(rest) step paper paper.log "${GROK[@]}" sweep --preset paper --device "$DEVICE" \
            --out "$PAPER_DIR" -q "${PAPER_ARGS[@]}"
    fi
    rc=$?
    P=$(ls -d "$PAPER_DIR"/*/ 2>/dev/null | head -n 1)
    [ "$rc" = 0 ] || row "paper" "exit $rc$([ "$rc" = 124 ] && echo ": the budget ran out; the next --paper call resumes $P")"
    if [ -n "$P" ] && STEP_TIMEOUT=30 step "paper report" paper_report.log "${GROK[@]}" report "$P"; then
        while IFS= read -r line; do row "paper" "$line"; done < <(grep -E '^(total|  first start|  cores kept)' "$OUT/paper_report.log")
        if STEP_TIMEOUT=60 step "paper verdicts" paper_verdicts.log "$PY" bench/gpu_agree.py verdicts "$P"; then
            cp "$OUT/paper_verdicts.log" "$OUT/paper_verdicts.txt"  # bench/gpu_agree.py verdicts --compare CPU.txt this
            row "paper verdicts" "$(cut -f2 "$OUT/paper_verdicts.txt" | sort | uniq -c | sed 's/^ *//' | paste -sd ',' -) (paper_verdicts.txt)"
        else
            row "paper verdicts" "FAILED (paper_verdicts.log)"
        fi
    else
        row "paper" "FAILED (paper.log)"
    fi
fi

# 3 the step recorded against eager on the presets that record now (c and the lr as device tensors)
if want graph; then
    if STEP_TIMEOUT=$(cap "${CAPS[0]}") step "cuda graph early" graph.log "$PY" bench/gpu_speed.py graph --device "$DEVICE" --only early; then
        while IFS= read -r line; do row "cuda graph" "$line"; done < <(grep -E '^early check' "$OUT/graph.log")
    else
        row "cuda graph" "FAILED (graph.log)"
    fi
fi

# 4 what the instruments cost a whole run: this tree, and the previous release's
if want instruments; then
    if [ -z "${REF_TREE:-}" ] && [ -n "${REF:-}" ]; then
        REF_TREE="$PWD/.ref-trees/$REF"
        if [ ! -d "$REF_TREE/engine" ]; then
            mkdir -p "$REF_TREE" && git archive "$REF" | tar -x -C "$REF_TREE" \
                || { echo "   cannot export $REF (no git history here? bring .ref-trees/$REF)"; REF_TREE=""; }
        fi
    fi
    share() {  # the instruments' share of the training time, from the medians of instruments.log
        "$PY" - "$1" <<'PYEOF'
import re, sys
med = dict(re.findall(r"^median (\w+)\s+([\d.]+) steps/s", open(sys.argv[1]).read(), re.M))
full, off = float(med.get("full", "nan")), float(med.get("noprobe", "nan"))
print(f"full {full:.0f} steps/s, probes off {off:.0f}: instruments {1 - full / off:.0%} of the training time")
PYEOF
    }
    for arm in ref this; do
        if [ "$arm" = ref ]; then
            [ -n "${REF_TREE:-}" ] || { row "instruments ref" "skipped: no REF or REF_TREE"; continue; }
            tree=(TREE="$REF_TREE")
        else
            tree=()
        fi
        if STEP_TIMEOUT=$(cap "${CAPS[1]}") step "instruments $arm" "instruments_$arm.log" env "${INSTR_ENV[@]}" "${tree[@]}" \
            DEVICE="$DEVICE" PYTHON="$PY" OUT="$OUT/instruments_$arm" bench/command_instruments.sh; then
            row "instruments $arm" "$(share "$OUT/instruments_$arm.log")"
        else
            row "instruments $arm" "FAILED (instruments_$arm.log)"
        fi
    done
fi

# 5 TF32 against fp32: one sweep twice, paired by member
if want tf32; then
    ok=1
    for tf in false true; do
        STEP_TIMEOUT=$(cap "${CAPS[2]}") step "sweep $TF32_PRESET tf32=$tf" "tf32_$tf.log" "${GROK[@]}" sweep --preset "$TF32_PRESET" \
            --device "$DEVICE" --seeds "$TF32_SEEDS" --set "train.tf32=$tf" --out "$RUNS/tf32_$tf" -q "${TF32_ARGS[@]}" || ok=0
    done
    G0=$(ls -d "$RUNS"/tf32_false/*-sweep 2>/dev/null | head -n 1)
    G1=$(ls -d "$RUNS"/tf32_true/*-sweep 2>/dev/null | head -n 1)
    if [ "$ok" = 1 ] && step "tf32 pairs" tf32.log "$PY" bench/gpu_agree.py tf32 "$G0" "$G1"; then
        row "tf32" "$(grep -m1 '^tf32 steps' "$OUT/tf32.log")"
        row "tf32 summary" "$(json "d.get('tf32', '-')" "$(ls "$G1"/*/summary.json | head -n 1)")"
    else
        row "tf32" "FAILED (tf32_false.log, tf32_true.log, tf32.log)"
    fi
fi

