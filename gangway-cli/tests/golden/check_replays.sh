#!/usr/bin/env bash
# Golden replay check: replays each line of gangway-cli/tests/golden/replays.sha256 through the release
# `gangway simulate` and compares the SHA-256 of its schedule CSV with the recorded digest.
#
#   gangway-cli/tests/golden/check_replays.sh            check; exits 1 naming every replay that differs
#   gangway-cli/tests/golden/check_replays.sh --update   record the digests of the current code instead
#
# Replays of ../shared/traces are skipped with a note when ../shared/traces is not beside the
# checkout, unless GANGWAY_REQUIRE_SHARED=1, which makes that an error; replays of
# committed fixtures always run. The binary is built first (`cargo build --release -p gangway-cli`,
# in CARGO_TARGET_DIR when set); GANGWAY_BIN=PATH uses that binary instead, unbuilt.
set -euo pipefail
cd "$(dirname "$0")/../../.."

golden=gangway-cli/tests/golden/replays.sha256
update=0
case "${1:-}" in
  "") ;;
  --update) update=1 ;;
  *)
    echo "usage: $0 [--update]" >&2
    exit 2
    ;;
esac

shared=1
if [[ ! -d ../shared/traces ]]; then
  shared=0
  if [[ "${GANGWAY_REQUIRE_SHARED:-}" == 1 ]]; then
    echo "error: GANGWAY_REQUIRE_SHARED=1 but ../shared/traces is missing beside the checkout" >&2
    exit 1
  fi
  if ((update)); then
    echo "error: --update needs every replay, and ../shared/traces is missing beside the checkout" >&2
    exit 1
  fi
  echo "note: ../shared/traces is missing beside the checkout: skipping its replays (GANGWAY_REQUIRE_SHARED=1 makes this an error)"
fi

if [[ -n "${GANGWAY_BIN:-}" ]]; then
  bin=$GANGWAY_BIN
else
  cargo build --release -p gangway-cli --quiet
  bin="${CARGO_TARGET_DIR:-target}/release/gangway"
fi

sha256() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d' ' -f1
  else
    shasum -a 256 "$1" | cut -d' ' -f1
  fi
}

now() { date +%s.%N; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

lines=()
failed=()
ran=0
checked=0
skipped=0
total_start=$(now)
while IFS= read -r line || [[ -n "$line" ]]; do
  if [[ -z "$line" || "$line" == "#"* ]]; then
    lines+=("$line")
    continue
  fi
  read -r want name args <<<"$line"
  read -ra argv <<<"$args"
  if [[ "$args" == *"../shared/"* ]] && ((!shared)); then
    lines+=("$line")
    skipped=$((skipped + 1))
    continue
  fi
  ran=$((ran + 1))
  csv="$tmp/$name.csv"
  start=$(now)
  if ! "$bin" simulate "${argv[@]}" --schedule-out "$csv" >"$tmp/$name.log" 2>&1; then
    echo "FAILED  $name: gangway simulate $args" >&2
    cat "$tmp/$name.log" >&2
    failed+=("$name")
    lines+=("$line")
    continue
  fi
  seconds=$(awk -v a="$start" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
  got=$(sha256 "$csv")
  checked=$((checked + 1))
  lines+=("$got  $name  $args")
  if [[ "$got" == "$want" ]]; then
    printf 'ok      %-22s %6s s\n' "$name" "$seconds"
  elif ((update)); then
    printf 'updated %-22s %6s s\n' "$name" "$seconds"
  else
    printf 'DIFFERS %-22s %6s s  gangway simulate %s\n        recorded %s\n        now      %s\n' \
      "$name" "$seconds" "$args" "$want" "$got"
    failed+=("$name")
  fi
done <"$golden"
total=$(awk -v a="$total_start" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')

if ((update)) && ((${#failed[@]} == 0)); then
  printf '%s\n' "${lines[@]}" >"$golden"
  echo "$golden: $checked digests written in $total s"
  exit 0
fi
if ((${#failed[@]})); then
  echo "golden replays: ${#failed[@]} of $ran differ or failed: ${failed[*]}" >&2
  exit 1
fi
note=""
((skipped)) && note=" ($skipped skipped: no ../shared/traces)"
echo "golden replays: $checked of $ran match, in $total s$note"
