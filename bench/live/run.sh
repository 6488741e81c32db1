#!/bin/sh
# Times lcp call with the live view (a pseudo-terminal) against pipes, and
# prints the ratios. Usage: bench/live/run.sh [-runs 11] [-python python3]
set -eu
cd "$(dirname "$0")/../.."
exec go run ./bench/live "$@"
