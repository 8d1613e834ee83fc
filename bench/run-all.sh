#!/usr/bin/env bash
# Runs every jitoutbox benchmark against the local servers and writes
#   bench/results/<date>.txt          raw `go test -bench` output (all runs)
#   bench/results/<date>-latency.tsv.gz  raw latency samples (-latency.out)
#   bench/results/<date>.md           the summary table (bench/cmd/benchtable)
#   bench/results/<date>-latency.svg  the latency picture (bench/cmd/latencyplot)
# and copies the last two to bench/results/latest.md and latest-latency.svg.
# bench/README.md's current table quotes a run's figures with a link to it.
#
# Usage: bench/run-all.sh [-quick]
#   -quick  shorter windows and backlogs (a smoke run, not for the README)
# Environment: JITOUTBOX_POSTGRES_DSN, JITOUTBOX_MYSQL_DSN, JITOUTBOX_NATS_URL
# (defaults: the local servers), MACHINE (description for the table header),
# LOAD_NOTE (what else was running).
set -euo pipefail
cd "$(dirname "$0")/.."

export JITOUTBOX_POSTGRES_DSN="${JITOUTBOX_POSTGRES_DSN:-postgres://postgres@127.0.0.1:5432/test?sslmode=disable}"
export JITOUTBOX_MYSQL_DSN="${JITOUTBOX_MYSQL_DSN:-root@tcp(127.0.0.1:3306)/test}"
export JITOUTBOX_NATS_URL="${JITOUTBOX_NATS_URL:-nats://127.0.0.1:4222}"

quick=0
[[ "${1:-}" == "-quick" ]] && quick=1

date="$(date -u +%Y-%m-%d)"
out=bench/results
mkdir -p "$out"
raw="$out/$date.txt"
tsv="$out/$date-latency.tsv"
: >"$raw"
: >"$tsv"
tsv_abs="$(pwd)/$tsv"

if ((quick)); then
	drain=(-drain.events=20000) limits=(-limits.events=20000) lat=(-latency.duration=1s) idle=(-idle.duration=5s) wm=(-drain.events=5000 -latency.duration=1s)
else
	drain=() limits=() lat=() idle=() wm=()
fi

load() { awk '{print $1", "$2", "$3}' /proc/loadavg; }
load_start="$(load)"

# bench NAME-REGEXP BENCHTIME [flags...]: runs in ./bench, appends to $raw.
bench() {
	local re="$1" bt="$2"
	shift 2
	echo "== go test -bench '$re' -benchtime=$bt $*" | tee -a "$raw"
	echo "# load average before: $(load)" >>"$raw"
	# A benchmark that does not exist yet matches nothing; that is fine.
	go test -run '^$' -bench "$re" -benchtime="$bt" -benchmem -timeout 60m ./bench/ "$@" 2>&1 | tee -a "$raw" || echo "# FAILED: $re" | tee -a "$raw"
}

bench '^BenchmarkCommit' 1s
bench '^BenchmarkLimits$' 1x "${limits[@]}"
bench '^BenchmarkDrain$' 1x "${drain[@]}"
bench '^BenchmarkDrainFewAggregates$' 1x "${drain[@]}"
bench '^BenchmarkDrainVsLimit$' 1x "${limits[@]}"
bench '^BenchmarkCrossProcess' 1s
bench '^BenchmarkLatencyStages$' 500x
bench '^BenchmarkLatency$' 1x -latency.out="$tsv_abs" "${lat[@]}"
bench '^BenchmarkIdle$' 1x "${idle[@]}"

echo "== watermill (bench/watermill, its own module)" | tee -a "$raw"
echo "# load average before: $(load)" >>"$raw"
(cd bench/watermill && go test -run '^$' -bench . -benchtime=1x -timeout 60m . -latency.out="$tsv_abs" "${wm[@]}") 2>&1 | tee -a "$raw" || echo "# FAILED: watermill" | tee -a "$raw"

load_end="$(load)"
note="${LOAD_NOTE:-}"
note="load average (1/5/15 min) at start: $load_start; at end: $load_end${note:+; $note}"
((quick)) && note="QUICK SMOKE RUN (short windows); $note"
machine="${MACHINE:-$(nproc) vCPU, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr)}"

go run ./bench/cmd/benchtable -date "$date" -machine "$machine" -note "$note" "$raw" >"$out/$date.md"
go run ./bench/cmd/latencyplot -o "$out/$date-latency.svg" "$tsv"
gzip -f "$tsv" # raw samples: tens of MB uncompressed
cp "$out/$date.md" "$out/latest.md"
cp "$out/$date-latency.svg" "$out/latest-latency.svg"
go run ./bench/cmd/latencyplot -o "$out/latest-latency.png" "$tsv.gz"
echo "wrote $raw, $tsv.gz, $out/$date.md, $out/$date-latency.svg (and latest.*)"
