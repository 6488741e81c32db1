#!/bin/sh
# Times `lcp check` against `lcp list` on the renamed top-level standard
# library (168 files for Python 3.11) and prints the ratio.
# Usage: bench/check/run.sh [-python python3] [-runs 5] [-corpus DIR]
set -eu
cd "$(dirname "$0")/../.."
exec go run ./bench/check "$@"
