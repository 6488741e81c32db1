#!/bin/sh
# Times `lcp list --json --tools DIR` against the Python ast reference that
# prints the same JSON, on the renamed top-level standard library and on
# 100 typical tool files; prints medians of wall and CPU times and ratios.
# Usage: bench/list/run.sh [-python python3] [-runs 9] [-corpus DIR] [-before OLD_LCP]
set -eu
cd "$(dirname "$0")/../.."
exec go run ./bench/list "$@"
