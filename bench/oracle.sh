#!/usr/bin/env bash
# The command oracle for a change that must not change behaviour (a module move, a split): 37 `grok`
# commands, figures included, over one fixture, each one's stdout, stderr and exit code in OUT.
#
#   bench/oracle.sh fixture FIX          train the fixture once (a tiny run, a fork, a tiny sweep)
#   bench/oracle.sh run FIX OUT          every command over FIX, each into OUT/NN.txt (and NN.png)
#   diff -r OUT_BEFORE OUT_AFTER         nothing printed: the change is byte-identical
#
# Run `fixture` with the code before the change, then `run` before and after. The commands read the
# fixture (fixed bytes), and the two that train print their metrics without the wall-clock column.
set -uo pipefail
export COLUMNS=100 NO_COLOR=1 PYTHONHASHSEED=0 OMP_NUM_THREADS=1
here="$(cd "$(dirname "$0")/.." && pwd)"
export PATH="$here/.venv/bin:$PATH"  # the grok and python that `make install` made
tiny="$here/tests/data/tiny.toml"
sweep="$here/tests/data/tiny_sweep.toml"

fixture() {
    local fix="$1"
    mkdir -p "$fix"
    grok run --config "$tiny" --set train.keep_every=20 --set probe.grad_every=20 --set probe.norm_every=20 --out "$fix/r" -q
    mv "$fix"/r/* "$fix/run" && rmdir "$fix/r"
    grok fork "$fix/run" --at 40 -i rescale:rare=ring --set optim.lr=0.002 --out "$fix/f" -q
    mv "$fix"/f/* "$fix/fork" && rmdir "$fix/f"
    grok sweep --config "$sweep" --seeds 2 --out "$fix" --workers 1 -q >/dev/null
    mv "$fix"/*-sweep "$fix/group"
}

no_wall() {  # a metrics.csv without its wall_s column
    python -c 'import csv,sys; r=list(csv.reader(open(sys.argv[1]))); i=r[0].index("wall_s"); [print(",".join(x[:i]+x[i+1:])) for x in r]' "$1"
}

run() {
    local fix="$1" out="$2" n=0 tmp
    mkdir -p "$out"
    tmp="$(mktemp -d)"
    one() {  # one command: its output, then its exit code
        n=$((n + 1))
        local f
        f="$out/$(printf %02d $n).txt"
        { echo "\$ $*"; "$@" 2>&1; echo "exit $?"; } | sed "s#$fix#FIX#g; s#$tmp#TMP#g" >"$f"
    }
    one grok --help
    one grok run --help
    one grok fork --help
    one grok sweep --help
    one grok report --help
    one grok presets
    one grok presets skewed_mul
    one grok sweep --preset decouple_paper --plan
    one grok sweep --preset paper --plan
    one grok show "$fix/run" -n 3
    one grok show "$fix/fork" --wide
    one grok show "$fix/group"
    one grok ls "$fix" --wide
    one grok ls "$fix" --json
    one grok plot "$fix/run" --width 80 --height 20 --no-color
    one grok plot "$fix/group" --width 80 --height 20 --no-color
    one grok report "$fix/group"
    one grok report "$fix/group" -f markdown --tail 2
    one grok report "$fix/group" -f csv
    one grok export "$fix/run" -o "$tmp/run.csv"
    one cat "$tmp/run.csv"
    one grok export "$fix/group" -o "$tmp/group.csv"
    one cat "$tmp/group.csv"
    one grok tokens "$fix/run"
    one grok split --config "$tiny"
    one grok circuit "$fix/group"
    one grok show "$fix/group/m000-adam-op=add-s0"
    one grok figure "$fix/run" -o "$tmp/run.png"
    one sha256sum "$tmp/run.png"
    one grok figure "$fix/group" -o "$tmp/group.png"
    one sha256sum "$tmp/group.png"
    one grok run --preset no_such_preset
    one grok run --config "$tiny" --set optim.lr=abc
    one grok fork "$fix/run" --at 7 --out "$tmp/bad"
    one python -m engine.config.doc
    grok run --config "$tiny" --out "$tmp/r" -q >/dev/null 2>&1
    mv "$tmp"/r/* "$tmp/again"
    one no_wall "$tmp/again/metrics.csv"
    grok fork "$fix/run" --at 40 -i rescale:rare=ring --set optim.lr=0.002 --out "$tmp/refork" -q >/dev/null 2>&1
    one no_wall "$tmp"/refork/run-fork40/metrics.csv
    rm -rf "$tmp"
}

case "${1:-}" in
fixture) fixture "$2" ;;
run) run "$2" "$3" ;;
*)
    echo "usage: bench/oracle.sh fixture FIX | run FIX OUT" >&2
    exit 2
    ;;
esac
