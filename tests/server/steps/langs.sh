# SPDX-License-Identifier: GPL-2.0
# Step (guest): alice (group twheel) runs the main README's example of
# each language binding as it was installed by langs-install: the Go
# binary, the Python block in the venv, the Java class against the jar,
# the Node.js block in the npm project. One line per language.
. "$T/lib.sh"

app=/home/alice/langs
bad=0
# run LANG CMD LINE...: alice runs CMD; it must exit 0 and print one line
# for each LINE (an extended regular expression, whole line, in order),
# no line twice.
run() {
	local lang=$1 cmd=$2 got rc=0 i=0 line
	shift 2
	got=$(su - alice -c "timeout 120 $cmd" 2>&1) || rc=$?
	printf '%s: %s\n' "$lang" "$got" >&2
	local -a lines=()
	mapfile -t lines <<<"$got"
	[ "$rc" = 0 ] && [ "${#lines[@]}" = $# ] || rc=${rc/#0/lines}
	for line; do
		[ "$rc" = 0 ] || break
		printf '%s\n' "${lines[i]}" | grep -Eqx -- "$line" || rc=line$((i + 1))
		i=$((i + 1))
	done
	[ "$rc" = 0 ] && [ "$(printf '%s\n' "$got" | sort | uniq -d)" != "" ] && rc=twice
	got=$(printf '%s' "$got" | tr '\n' ';' | cut -c1-300)
	if [ "$rc" = 0 ]; then
		echo "server: $STEP ok $lang: $got"
	else
		echo "server: $STEP FAIL $lang ($rc): $got"
		bad=1
	fi
}

[ -d "$app" ] || fail "no $app: the step langs-install did not run"
run go "$app/go/readme" 'user 1 offline, .* late'
run python "$app/venv/bin/python $app/python/readme.py" 'offline: 7'
run java "java -cp $app/java/twheel-$VERSION.jar:$app/java/classes Offline" \
	'user [13] offline' 'user [13] offline' 'user 2 offline'
run node "node $app/app/readme-example.js" 'offline: 7'
exit $bad
