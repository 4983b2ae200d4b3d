#!/usr/bin/env bash
# Runs the tmux end-to-end test of `till ui` N times in a row (default 20) while two busy loops keep both cores
# loaded, and stops at the first failure. Usage: bash scripts/tui-soak.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-20}"
burners=()
for _ in 1 2; do node -e 'for (;;) {}' & burners+=($!); done
trap 'kill "${burners[@]}" 2>/dev/null || true' EXIT
npm run --silent build
for run in $(seq 1 "$runs"); do
  started=$(date +%s)
  if ! TILL_SKIP_BUILD=1 npx vitest run cli/commands/ui.test.ts --maxWorkers=1 >"/tmp/tui-soak-$run.log" 2>&1; then
    echo "run $run of $runs failed (load $(cut -d' ' -f1 /proc/loadavg)); its output: /tmp/tui-soak-$run.log"
    exit 1
  fi
  echo "run $run of $runs passed in $(( $(date +%s) - started )) s (load $(cut -d' ' -f1 /proc/loadavg))"
done
echo "all $runs runs passed"
