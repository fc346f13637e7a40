#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1 OR MIT
#
# Runs the Go binding's test binary in the VM (busybox sh) and reports it
# as kselftest-style TAP, one line per top-level test:
#   ok N TestName | not ok N TestName | ok N TestName # SKIP reason
# then "binding: lang=go kernel=$(uname -r) passed=N failed=N skipped=N"
# (skips are not counted as passed), and, where `make install-check`
# left install-host and install-example beside the binary, the install
# line "install: lang=go ... example=ok|failed ...". A binary
# that dies without a verdict for a test it started (a panic, a timeout)
# adds a "not ok" line for it. Exit 1 if anything failed.
#   vm/run.sh KERNEL bindings/go/out/vm-test.sh bindings/go/out/twheel.test
# The binary is found beside this script (/tests in the VM) or as $1.
set -u

bin=${1:-$(dirname "$0")/twheel.test}
out=/tmp/go-test.out
# The uapi header, for the tests that check the ABI against it.
header=$(dirname "$bin")/twheel.h
# TestAPIIsTheSameOnEverySystem parses the package's source, which is
# not here: `make check` runs it on the host.
echo "TAP version 13"
TWHEEL_UAPI_HEADER=$header "$bin" -test.v -test.count=1 -test.timeout=600s \
	-test.skip '^TestAPIIsTheSameOnEverySystem$' >"$out" 2>&1
rc=$?
sed 's/^/# /' "$out"
awk -v rc="$rc" -v kernel="$(uname -r)" '
function verdict(line) { n++; print line }
/^=== RUN   [^\/]+$/ { running = $3; reason = ""; next }
/^    [^ :]+_test\.go:[0-9]+: / && reason == "" {
	reason = $0; sub(/^ +[^:]+:[0-9]+: /, "", reason)
}
/^--- (PASS|FAIL|SKIP): [^\/ ]+ / {
	running = ""
	if ($2 == "PASS:") { pass++; verdict("ok " n + 1 " " $3) }
	else if ($2 == "FAIL:") { fail++; verdict("not ok " n + 1 " " $3) }
	else { skip++; verdict("ok " n + 1 " " $3 " # SKIP " reason) }
}
END {
	if (running != "") { fail++; verdict("not ok " n + 1 " " running " # died: exit " rc) }
	else if (rc != 0 && !fail) { fail++; verdict("not ok " n + 1 " go test binary exit " rc) }
	print "1.." n
	printf "binding: lang=go kernel=%s passed=%d failed=%d skipped=%d\n", kernel, pass, fail, skip
	exit fail != 0
}' "$out"
status=$?

# The second half of the install check (install-check.sh did the first on
# the host): the README's program as a user built it, from the proxy,
# against the module. It must report user 1 offline and not user 2.
dir=$(dirname "$bin")
if [ -f "$dir/install-host" ] && [ -x "$dir/install-example" ]; then
	irc=0
	timeout 60 "$dir/install-example" >/tmp/go-install.out 2>&1 || irc=$?
	sed 's/^/# install-example: /' /tmp/go-install.out
	if [ "$irc" = 0 ] && [ "$(grep -c . /tmp/go-install.out)" = 1 ] &&
		grep -q '^user 1 offline, .* late$' /tmp/go-install.out; then
		example=ok
	else
		example=failed
		status=1
	fi
	sed "s/ no_module=/ example=$example no_module=/; s/^/install: /" "$dir/install-host"
fi
exit $status
