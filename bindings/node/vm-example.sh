#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The heartbeat example (examples/heartbeat.js: twheel beside the seed's
# ring of Sets) in the test VM (busybox sh), from the package that `make
# vm-files` put in /opt/NAME. Its exit status is the example's: 0 only if
# both ways reported every silent connection, none early and no live one.

found=$(ls -d /opt/*/node_modules/twheel/examples 2>/dev/null | head -n 1)
[ -n "$found" ] || { echo "vm-example.sh: no /opt/*/node_modules/twheel (vm/run.sh --copy DIR)"; exit 1; }
# Under software emulation V8's interpreter is slow and code it compiles
# late stalls the loop for seconds: compile baseline code at once.
exec in-debian node --always-sparkplug "$found/heartbeat.js"
