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
#
# Where the host's install check left its line (/opt/java/install-host),
# the README's example then runs once more on its own, from the jar as
# installed here, and its result joins that line:
#   install: lang=java from=... fresh=yes example=ok|failed no_module=...
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
rc=0
in-debian java -XX:TieredStopAtLevel=1 -Xshare:auto -Xmx1g \
	-Dtwheel.readme.classes="$dir/readme" -Dtwheel.example.jar="$dir/example/heartbeat.jar" \
	-cp "$dir/lib/*" org.twheel.tools.TapMain || rc=$?

host=/opt/java/install-host
[ -f "$host" ] || exit $rc
# The README's promise: users 1 and 3 (one deadline, either order), then 2.
out=$(in-debian timeout 120 java -XX:TieredStopAtLevel=1 -Xshare:auto \
	-cp "$dir/readme:$dir/lib/twheel.jar" Offline 2>&1) && ok=yes || ok=no
printf '%s\n' "$out" | sed 's/^/# readme: /'
first=$(printf '%s\n' "$out" | head -n 2 | sort | tr '\n' ,)
last=$(printf '%s\n' "$out" | sed -n 3p)
lines=$(printf '%s\n' "$out" | wc -l)
example=failed
if [ $ok = yes ] && [ "$lines" -eq 3 ] && [ "$first" = "user 1 offline,user 3 offline," ] &&
	[ "$last" = "user 2 offline" ]; then
	example=ok
fi
echo "install: $(sed "s/ no_module=/ example=$example no_module=/" "$host")"
[ $example = ok ] || rc=1
exit $rc
