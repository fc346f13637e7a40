# SPDX-License-Identifier: GPL-2.0
#
# Sourced by the scripts that run long stages (scripts/check.sh,
# scripts/demo.sh, vm/run.sh): so that nobody stares at a silent terminal,
# a stage that runs longer than 30 s says every 30 s what it is doing and
# how far it got.
#
#   run_progress WHAT DESCRIBE CMD...
#
# runs CMD (its output redirected as the caller redirects the call) and,
# while it runs, prints "progress: WHAT: N s[, what DESCRIBE prints]" to
# the terminal or log the script started with (fd 7, which the sourcing
# opens). DESCRIBE is the name of a shell function, or "". Returns CMD's
# exit status.

exec 7>&1

run_progress() {
	local what=$1 describe=$2 pid ticker t0 rc=0
	shift 2
	t0=$(date +%s)
	"$@" &
	pid=$!
	(
		while sleep 30; do
			kill -0 "$pid" 2>/dev/null || exit 0
			line="progress: $what: $(( $(date +%s) - t0 )) s"
			if [ -n "$describe" ]; then
				d=$("$describe" 2>/dev/null) || d=
				[ -n "$d" ] && line="$line, $d"
			fi
			echo "$line" >&7
		done
	) &
	ticker=$!
	wait "$pid" || rc=$?
	kill "$ticker" 2>/dev/null || true
	wait "$ticker" 2>/dev/null || true
	return "$rc"
}

# What a VM is running: DESCRIBE for a vm/run.sh whose output directory
# is $progress_vm_out.
progress_vm() {
	local raw=$progress_vm_out/results.raw n total
	[ -f "$raw" ] || { echo "booting"; return; }
	total=$(wc -l <"$progress_vm_out/initramfs/tests/list" 2>/dev/null || echo '?')
	n=$(grep -c '^twheel-vm: begin ' "$raw" || true)
	if [ "${n:-0}" = 0 ]; then
		echo "booting"
	else
		echo "program $n of $total: $(grep '^twheel-vm: begin ' "$raw" | tail -n 1 | cut -d' ' -f3)"
	fi
}
