#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The Node benchmark (bench/bench.js) in the test VM (busybox sh), from
# the package that `make vm-files` put in /opt/NAME: twheel against
# setTimeout/clearTimeout and timeout.refresh() at 10^5 and 10^6 ids, one
# binding-bench: line each. It runs in a memory cgroup of its own, whose
# memory.stat "kernel" is where bench.js finds the module's memory.

found=$(ls -d /opt/*/node_modules/twheel/bench 2>/dev/null | head -n 1)
[ -n "$found" ] || { echo "vm-bench.sh: no /opt/*/node_modules/twheel (vm/run.sh --copy DIR)"; exit 1; }
echo +memory >/sys/fs/cgroup/cgroup.subtree_control
mkdir -p /sys/fs/cgroup/node-bench
(
	# 0 is the writer itself: this subshell, which node then inherits.
	echo 0 >/sys/fs/cgroup/node-bench/cgroup.procs
	exec in-debian node --expose-gc "$found/bench.js"
)
