#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The Node binding's tests in the test VM (busybox sh): vm/run.sh --lang
# --copy DIR, DIR made by `make -C bindings/node vm-files DIR=...`: a
# project into which the host `npm install`ed the tarball (the guest's
# Debian root has Node and no compiler), so the package is
# /opt/NAME/node_modules/twheel in the guest and in its Debian root, with
# the tests put inside it. Runs `node --test` there as root, then the
# README's example from /opt/NAME, where it requires the installed
# package (it must print `offline: 7`), and prints one kselftest-style TAP
# line per test (`ok N name`, `not ok N name`, `ok N name # SKIP
# reason`); where /opt/NAME/install-host holds the host's install-check
# line, that line again from the example's result here,
#   install: lang=node from=... fresh=yes example=ok|failed no_module=...
# then
#   binding: lang=node kernel=RELEASE passed=N failed=N
# (skips count in neither). Exit status 1 if a test failed or none ran.

found=$(ls -d /opt/*/node_modules/twheel/test 2>/dev/null | head -n 1)
app=${found%/node_modules/twheel/test}
kernel=$(uname -r)
if [ -z "$found" ]; then
	echo "not ok 1 the Node package is in /opt (vm/run.sh --copy DIR)"
	echo "binding: lang=node kernel=$kernel passed=0 failed=1"
	exit 1
fi

in-debian node --test --test-reporter=tap "$app/node_modules/twheel/test/" >/tmp/node-tap.txt 2>&1
node_rc=$?
readme_rc=0
in-debian sh -c "cd '$app' && node readme-example.js" >/tmp/node-readme.txt 2>&1 || readme_rc=$?

grep -qx 'offline: 7' /tmp/node-readme.txt && readme_ok=1 || readme_ok=0
# The example must have run the installed package, not another twheel.
resolved=$(in-debian sh -c "cd '$app' && node -p \"require.resolve('twheel')\"" 2>&1)
if [ "$resolved" != "$app/node_modules/twheel/index.js" ]; then
	echo "# the README example's require('twheel') is $resolved" >>/tmp/node-readme.txt
	readme_ok=0
fi
awk -v node_rc="$node_rc" -v readme_rc="$readme_rc" -v readme_ok="$readme_ok" -v kernel="$kernel" '
	# Only the top-level results: subtests are indented.
	/^(not )?ok [0-9]+ - / {
		ok = $1 == "ok"
		line = $0
		sub(/^(not )?ok [0-9]+ - /, "", line)
		n++
		if (!ok) {
			failed++
			print "not ok " n " " line
		} else {
			if (line !~ / # SKIP/)
				passed++
			print "ok " n " " line
		}
	}
	END {
		n++
		if (readme_rc == 0 && readme_ok) {
			passed++
			print "ok " n " README example runs as it stands"
		} else {
			failed++
			print "not ok " n " README example runs as it stands (exit " readme_rc ")"
		}
		if (node_rc != 0 && failed == 0)
			failed = 1
		printf "binding: lang=node kernel=%s passed=%d failed=%d\n", kernel, passed, failed
		exit failed ? 1 : 0
	}' /tmp/node-tap.txt >/tmp/node-results.txt
rc=$?
sed '$d' /tmp/node-results.txt
if [ "$rc" != 0 ]; then
	echo "# node --test exited $node_rc; its output:"
	sed 's/^/# /' /tmp/node-tap.txt
	echo "# README example:"
	sed 's/^/# /' /tmp/node-readme.txt
fi
if [ -f "$app/install-host" ]; then
	result=failed
	[ "$readme_rc" = 0 ] && [ "$readme_ok" = 1 ] && result=ok
	sed -n "1s/ no_module=/ example=$result no_module=/; 1s/^/install: /p" "$app/install-host"
fi
tail -n 1 /tmp/node-results.txt
exit "$rc"
