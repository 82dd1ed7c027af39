#!/usr/bin/env bash
# Runs the soak tests, each for SOAK_SECONDS (default 600), one after the other. Usage:
#   scripts/soak.sh [name...]     (default: every soak in the list below)
# Each soak is a Swift test that runs only when COFFER_SOAK_SECONDS is set; it writes what it found to
# COFFER_SOAK_REPORT (.build/soak/NAME.md) and prints its figures. To add a soak, add a line
# "name=test filter" to `soaks`.
set -euo pipefail
cd "$(dirname "$0")/.."

soaks=(
    "stateful-fuzzer=StatefulFuzzTests/soak"
    "sync-model=SyncModelTests/soak"
)

seconds=${SOAK_SECONDS:-600}
[[ $seconds =~ ^[0-9]+$ ]] || { echo "soak: SOAK_SECONDS must be a number of seconds, not '$seconds'" >&2; exit 2; }

selected=("$@")
if [[ ${#selected[@]} -eq 0 ]]; then
    for soak in "${soaks[@]}"; do selected+=("${soak%%=*}"); done
fi

swift build --build-tests
mkdir -p .build/soak
status=0
for name in "${selected[@]}"; do
    filter=""
    for soak in "${soaks[@]}"; do [[ ${soak%%=*} == "$name" ]] && filter=${soak#*=}; done
    [[ -n $filter ]] || { echo "soak: no soak named '$name' (known: ${soaks[*]%%=*})" >&2; exit 2; }
    report="$PWD/.build/soak/$name.md"
    echo "soak: $name for ${seconds}s (report: .build/soak/$name.md)"
    # The sync model reads its own names: its seconds, and a folder for failing seeds' replay scripts.
    COFFER_SOAK_SECONDS=$seconds COFFER_SOAK_REPORT=$report COFFER_SYNC_SOAK_SECONDS=$seconds \
        COFFER_SYNC_MODEL_OUT="$PWD/.build/sync-model" swift test --skip-build --filter "$filter" || status=1
done
exit $status
