#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The demo behind `make demo`: install what is needed, build the module
# and examples/heartbeat/heartbeat (a static program, `make -C examples/heartbeat`), boot a Debian
# kernel under QEMU with the module loaded (vm/run.sh, which fetches the
# kernel into the cache: the host's own boot is left alone), run the demo
# in it and print its output, whose last line is a machine-readable
# "demo: ..." summary. Fails if the VM or the demo failed.
# Environment: TWHEEL_DEMO_KERNEL (6.12, or any KERNEL of vm/run.sh),
# TWHEEL_CACHE, and those of vm/run.sh.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${TWHEEL_CACHE:-/var/tmp/twheel-cache}
kernel=${TWHEEL_DEMO_KERNEL:-6.12}
out=$cache/demo/$kernel
demo=$top/examples/heartbeat/heartbeat

"$top/scripts/setup.sh" demo
[ -f "$top/examples/heartbeat/Makefile" ] || { echo "demo: no examples/heartbeat/Makefile yet" >&2; exit 1; }
make -C "$top/examples/heartbeat"
[ -x "$demo" ] || { echo "demo: make -C examples/heartbeat made no $demo" >&2; exit 1; }

rc=0
"$top/vm/run.sh" --out "$out" "$kernel" "$demo" || rc=$?
echo
echo "---- examples/heartbeat/heartbeat on $kernel ----"
awk '$0 == "twheel-vm: begin heartbeat" { on = 1; next }
     /^twheel-vm: end heartbeat exit=/ { on = 0 } on' "$out/results.txt"
echo "----"
grep -q '^demo: ' "$out/results.txt" || { echo "demo: no final 'demo:' line" >&2; rc=1; }
[ "$rc" = 0 ] || echo "demo FAILED: see $out/results.txt and $out/kernel.log" >&2
exit "$rc"
