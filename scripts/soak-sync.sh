#!/usr/bin/env bash
# Runs the multi-clone sync model (Tests/CofferCLITests/SyncModelTests.swift) on new seeds for a while.
# Usage: scripts/soak-sync.sh [SECONDS]   (default 600; `make soak SECONDS=N` calls it)
# Environment: COFFER_SYNC_SOAK_START (first seed; then consecutive), COFFER_SYNC_STEPS (random steps a
# seed, default 30), COFFER_SYNC_WITHOUT (parts of the model to leave out, e.g. kill,files,gpgid).
# Each failing seed's findings and replay script go to COFFER_SYNC_MODEL_OUT (default .build/sync-model).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
[[ $seconds =~ ^[0-9]+$ ]] || { echo "usage: $0 [SECONDS]" >&2; exit 2; }
out=${COFFER_SYNC_MODEL_OUT:-$PWD/.build/sync-model}
mkdir -p "$out"
swift build --build-tests
echo "sync model soak: $seconds s; failing seeds are written to $out"
COFFER_SYNC_SOAK_SECONDS=$seconds COFFER_SYNC_MODEL_OUT=$out \
    swift test --skip-build --filter 'SyncModelTests/soak'
