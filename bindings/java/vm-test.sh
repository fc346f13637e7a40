#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1 OR MIT
#
# The Java binding's tests in the test VM (vm/run.sh --lang --copy DIR,
# DIR from `make vm-files`): every JUnit test of the jar, the README's
# example and the heartbeat example, in Debian 12's JRE, as TAP (one line
# per test) and last
#   binding: lang=java kernel=RELEASE passed=N failed=N
# Exit status non-zero if a test failed. C1 only and class data sharing:
# under software emulation the JVM's own start-up is most of the time.
set -eu

dir=
for d in /opt/*; do
	[ -f "$d/lib/twheel.jar" ] && dir=$d
done
if [ -z "$dir" ]; then
	echo "not ok 1 the Java binding's files are in /opt (make vm-files)"
	echo "binding: lang=java kernel=$(uname -r) passed=0 failed=1"
	exit 1
fi
exec in-debian java -XX:TieredStopAtLevel=1 -Xshare:auto -Xmx1g \
	-Dtwheel.readme.classes="$dir/readme" -Dtwheel.example.jar="$dir/example/heartbeat.jar" \
	-cp "$dir/lib/*" org.twheel.tools.TapMain
