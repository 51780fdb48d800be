#!/usr/bin/env bash
# Every trace, every policy, to the end: replays each shared trace (the SWF logs, the Alibaba GPU
# pod lists) and each committed sample (the KTH excerpt, the sacct and CSV histories) under every
# policy of `gangway simulate`, ssh included, through the release binary, and fails naming each
# replay that did not run to its end (any error, any non-zero exit). It checks no digest: that is
# check_replays.sh's job.
#
#   gangway-cli/tests/golden/check_all_traces.sh                 every trace × every policy
#   GANGWAY_POLICIES=ssh,easy gangway-cli/tests/golden/check_all_traces.sh   only these policies
#   GANGWAY_TRACES=KTH gangway-cli/tests/golden/check_all_traces.sh   only traces whose name has KTH
#
# Slow: the large SWF logs under conservative backfill take minutes each (docs/simulate.md,
# "Every trace to the end", records a run), so CI does not run it; run it before closing a
# change to the simulator. The shared traces are skipped with a note when ../shared/traces is
# not beside the checkout, unless GANGWAY_REQUIRE_SHARED=1, which makes that an error. The
# binary is built first (`cargo build --release -p gangway-cli`, in CARGO_TARGET_DIR when set);
# GANGWAY_BIN=PATH uses that binary instead, unbuilt.
set -euo pipefail
cd "$(dirname "$0")/../../.."

policies=${GANGWAY_POLICIES:-ssh,fcfs,easy,conservative,full,sjf,las}
filter=${GANGWAY_TRACES:-}
fixtures=gangway-sim/tests/fixtures

# One replay a line: NAME|ARGS (ARGS split on spaces, relative to the repository root).
replays=(
  "kth200|--trace $fixtures/KTH-SP2-1996-2.1-cln-first200.swf"
  "history-sacct|--trace $fixtures/history-sacct.txt --utc-offset +01:00"
  "history-sacct-cluster|--trace $fixtures/history-sacct.txt --utc-offset +01:00 --cluster $fixtures/history-cluster.json"
  "history-csv|--trace $fixtures/history-jobs.csv --utc-offset +01:00"
  "history-csv-cluster|--trace $fixtures/history-jobs.csv --utc-offset +01:00 --cluster $fixtures/history-cluster.json"
)
if [[ -d ../shared/traces ]]; then
  for f in ../shared/traces/*.swf ../shared/traces/*.swf.gz ../shared/traces/alibaba-gpu-2023/*pod_list*.csv; do
    [[ -e "$f" ]] || continue
    replays+=("$(basename "$f")|--trace $f")
  done
elif [[ "${GANGWAY_REQUIRE_SHARED:-}" == 1 ]]; then
  echo "error: GANGWAY_REQUIRE_SHARED=1 but ../shared/traces is missing beside the checkout" >&2
  exit 1
else
  echo "note: ../shared/traces is missing beside the checkout: replaying the committed samples only"
fi

if [[ -n "${GANGWAY_BIN:-}" ]]; then
  bin=$GANGWAY_BIN
else
  cargo build --release -p gangway-cli --quiet
  bin="${CARGO_TARGET_DIR:-target}/release/gangway"
fi

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

log=$(mktemp)
trap 'rm -f "$log"' EXIT
failed=()
ran=0
total_start=$(now)
IFS=, read -ra policy_list <<<"$policies"
for replay in "${replays[@]}"; do
  name=${replay%%|*}
  args=${replay#*|}
  if [[ -n "$filter" && "$name" != *"$filter"* ]]; then
    continue
  fi
  read -ra argv <<<"$args"
  for policy in "${policy_list[@]}"; do
    ran=$((ran + 1))
    start=$(now)
    if "$bin" simulate "${argv[@]}" --policy "$policy" >"$log" 2>&1; then
      printf 'ok      %-36s %-13s %7s s\n' "$name" "$policy" "$(since "$start")"
    else
      printf 'FAILED  %-36s %-13s %7s s  gangway simulate %s --policy %s\n' \
        "$name" "$policy" "$(since "$start")" "$args" "$policy"
      tail -n 5 "$log" | sed 's/^/        /'
      failed+=("$name/$policy")
    fi
  done
done

total=$(since "$total_start")
if ((${#failed[@]})); then
  echo "all traces: ${#failed[@]} of $ran replays failed, in $total s: ${failed[*]}" >&2
  exit 1
fi
echo "all traces: $ran replays ran to their end, in $total s"
