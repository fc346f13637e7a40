#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the README's commands on a fresh machine: a pristine Debian 12 root
# (debootstrap --variant=minbase, unpacked anew from a cached tarball no
# run has installed into), with nothing of this host in it but what a
# machine gives every process (/proc, /sys, /dev, the network's
# resolv.conf), the language toolchains a new machine of this kind has
# (read-only; the list is below), the project's cache and apt's download
# cache (so a warm run fetches nothing twice). The tree is copied in and
# the "Try it" block of README.md runs there line by line, as a new user
# would type it; a package the project needs but does not install fails
# here. The root is thrown away afterwards. This is what CI runs
# (.ci/run) and what `make fresh-check` runs by hand.
#
#   scripts/fresh.sh [--keep] [-- CMD...]
#
# --keep: leave the root in $TWHEEL_FRESH (default /var/tmp/twheel-fresh)
# to look at. CMD: run CMD in the root instead of the README's block.
# Prints each stage's wall time, and repeats the last "N passed, N
# failed, N skipped" line of the check last. Exit status: that of the
# first command that failed. Needs root.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${TWHEEL_CACHE:-/var/tmp/twheel-cache}
base=${TWHEEL_FRESH:-/var/tmp/twheel-fresh}
mirror=${TWHEEL_MIRROR:-http://deb.debian.org/debian}
keep=0
[ "${1:-}" = --keep ] && { keep=1; shift; }
[ "${1:-}" = -- ] && shift

# The toolchains of a new machine of this kind (the env entry's machine
# doc: Go, CPython, the JDK with Maven, Node with npm), with the files
# outside their own trees that they read: mounted read-only.
toolchains="/usr/local/go /root/.pyenv
	/usr/lib/jvm /etc/java-17-openjdk /etc/ssl/certs/java
	/usr/share/maven /etc/maven
	/usr/bin/node /usr/lib/node_modules /usr/include/node"
# Debian's Maven links its jars from /usr/share/java, where other
# packages install theirs too: those files alone, not the directory, and
# the links between (guice-no-aop.jar -> guice-no-aop-4.2.3.jar) made
# again in the root.
maven_jars() {
	local l t n
	for l in /usr/share/maven/lib/* /usr/share/maven/boot/*; do
		t=$l
		while [ -L "$t" ]; do
			n=$(readlink "$t")
			case $n in /*) ;; *) n=$(dirname "$t")/$n ;; esac
			n=$(realpath -s "$n")
			case $t in /usr/share/maven/*) ;; *) echo "link $t=$(readlink "$t")" ;; esac
			t=$n
		done
		case $t in /usr/share/maven/*) ;; *) echo "file $t" ;; esac
	done | sort -u
}
toolchains="$toolchains $(maven_jars | sed -n 's/^file //p')"
# The commands those toolchains are found by.
links="/usr/bin/java=/usr/lib/jvm/java-17-openjdk-amd64/bin/java
	/usr/bin/javac=/usr/lib/jvm/java-17-openjdk-amd64/bin/javac
	/usr/bin/jar=/usr/lib/jvm/java-17-openjdk-amd64/bin/jar
	/usr/bin/keytool=/usr/lib/jvm/java-17-openjdk-amd64/bin/keytool
	/usr/bin/mvn=/usr/share/maven/bin/mvn
	/usr/bin/npm=/usr/lib/node_modules/npm/bin/npm-cli.js
	/usr/bin/npx=/usr/lib/node_modules/npm/bin/npx-cli.js
	$(maven_jars | sed -n 's/^link //p')"
# This kind of machine reaches the registries through a proxy whose
# certificate authorities the network gives, as it gives the name
# servers: their files (where ca-certificates takes a machine's own, so
# that installing it puts them in /etc/ssl/certs), and the variables of
# the environment that name the bundle, passed on.
ca_dir=/usr/local/share/ca-certificates
ca_env=$(for v in SSL_CERT_FILE SSL_CERT_DIR PIP_CERT REQUESTS_CA_BUNDLE CURL_CA_BUNDLE \
	NODE_EXTRA_CA_CERTS GIT_SSL_CAINFO; do
	[ -n "${!v:-}" ] && printf '%s=%s ' "$v" "${!v}"; done)
path=/usr/local/go/bin:/root/.pyenv/shims:/root/.pyenv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

die() { echo "fresh: $*" >&2; exit 2; }
now() { date +%s; }
timings=()
stage_start=0
stage() { stage_name=$1; stage_start=$(now); echo "== fresh: $1"; }
stage_done() { timings+=("$(printf '%6d s  %s' $(( $(now) - stage_start )) "$stage_name")"); }

# Every 30 s while $1 (a pid) runs, a line saying what runs and how far.
ticker() {
	local pid=$1 what=$2 t0
	t0=$(now)
	while kill -0 "$pid" 2>/dev/null; do
		sleep 30
		kill -0 "$pid" 2>/dev/null || break
		echo "fresh: $what: running for $(( $(now) - t0 )) s${3:+, $(eval "$3" 2>/dev/null)}"
	done
}

[ "$(id -u)" = 0 ] || die "run as root (it makes a chroot)"
if ! command -v debootstrap >/dev/null; then
	# The one package this host must have: what makes the fresh root.
	echo "fresh: installing debootstrap on the host (it makes the fresh root)"
	apt-get -o DPkg::Lock::Timeout=900 update -q >/dev/null
	apt-get -o DPkg::Lock::Timeout=900 install -y -q --no-install-recommends debootstrap >/dev/null
fi
for t in $toolchains; do
	[ -e "$t" ] || die "$t missing: this machine is not of the kind CI expects (its toolchains)"
done

start_all=$(now)
mkdir -p "$cache/fresh" "$cache/debootstrap" "$base"

# The pristine root, as debootstrap makes it; remade once a week so the
# point release stays current. Never installed into: each run unpacks it.
tarball=$cache/fresh/bookworm-minbase.tar
stage "pristine Debian 12 root"
exec 8>"$cache/fresh/lock"
flock 8
if [ ! -f "$tarball" ] || [ -n "$(find "$tarball" -mtime +7)" ]; then
	new=$cache/fresh/new
	rm -rf "$new"
	echo "fresh: debootstrap --variant=minbase bookworm (a few minutes)"
	debootstrap --variant=minbase --cache-dir="$cache/debootstrap" bookworm "$new" "$mirror" \
		>"$cache/fresh/debootstrap.log" 2>&1 &
	pid=$!
	ticker $pid "debootstrap" "echo \"\$(du -sm $new 2>/dev/null | cut -f1) MiB so far\"" &
	wait $pid || { tail -n 20 "$cache/fresh/debootstrap.log"; die "debootstrap failed"; }
	tar -C "$new" -cf "$tarball.new" .
	mv "$tarball.new" "$tarball"
	rm -rf "$new"
fi
flock -u 8
root=$(mktemp -d "$base/root.XXXXXX")
tar -C "$root" -xf "$tarball"
# What an installed Debian 12 has that debootstrap leaves out: the
# updates and security suites, and the network's name servers.
cat >"$root/etc/apt/sources.list" <<EOF
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb ${mirror%/debian}/debian-security bookworm-security main
EOF
cp /etc/resolv.conf "$root/etc/resolv.conf"
if [ -d "$ca_dir" ]; then
	mkdir -p "$root$ca_dir"
	find "$ca_dir" -maxdepth 1 -name '*.crt' -exec cp {} "$root$ca_dir/" \;
fi
# A mirror that serves expired Release files (a snapshot) needs these.
apt-config dump | grep -E '^Acquire::(Check-Valid-Until|Check-Date|https?::Proxy) ' \
	>"$root/etc/apt/apt.conf.d/00fresh-host" || true
# Keep downloaded packages (apt's download cache is shared with the host).
echo 'Binary::apt::APT::Keep-Downloaded-Packages "true";' >"$root/etc/apt/apt.conf.d/01keep"
mkdir -p "$root/root/twheel"
(cd "$top" && tar -cf - --exclude=./out .) | tar -C "$root/root/twheel" -xf -
stage_done
echo "fresh-root: created in $(( $(now) - stage_start )) s ($root)"

# The README's "Try it" block, one command a line, comments dropped.
if [ $# -gt 0 ]; then
	commands=("$*")
else
	mapfile -t commands < <(awk '/^## Try it/ { t = 1 } t && /^```sh$/ { on = 1; next }
		on && /^```$/ { exit } on' "$top/README.md" | sed 's/ *#.*//' | grep -v '^ *$')
	[ ${#commands[@]} -gt 0 ] || die "no sh block under '## Try it' in README.md"
fi

# In a private mount namespace: nothing stays mounted when it ends, and
# the host never sees these mounts (so removing the root is safe).
inside() {
	local root=$1 t l
	shift
	# The root a mount point of its own, as a machine's / is: tools that
	# make private mount namespaces inside (unshare --mount, as
	# vm/chroot.sh does) change the propagation of /, which must be one.
	mount --bind "$root" "$root"
	mount -t proc proc "$root/proc"
	mount --rbind /sys "$root/sys"
	mount --rbind /dev "$root/dev"
	for t in $toolchains; do
		if [ -d "$t" ]; then mkdir -p "$root$t"; else mkdir -p "$(dirname "$root$t")"; touch "$root$t"; fi
		mount --bind "$t" "$root$t"
		mount -o remount,bind,ro "$root$t"
	done
	for l in $links; do
		ln -sfn "${l#*=}" "$root${l%%=*}"
	done
	mkdir -p "$root$cache" "$root/var/cache/apt/archives"
	mount --bind "$cache" "$root$cache"
	mount --bind /var/cache/apt/archives "$root/var/cache/apt/archives"
	chroot "$root" /usr/bin/env -i HOME=/root PATH="$path" PYENV_ROOT=/root/.pyenv \
		LANG=C.UTF-8 TERM=dumb DEBIAN_FRONTEND=noninteractive TWHEEL_CACHE="$cache" \
		$ca_env \
		${TWHEEL_KERNELS:+TWHEEL_KERNELS="$TWHEEL_KERNELS"} \
		${TWHEEL_SERVER:+TWHEEL_SERVER="$TWHEEL_SERVER"} \
		bash -c 'cd /root/twheel && eval "$1"' bash "$1"
}

rc=0
log=$cache/fresh/last.log
: >"$log"
for c in "${commands[@]}"; do
	stage "$c"
	export -f inside
	export toolchains links cache path ca_env
	set +e
	unshare --mount --propagation private bash -c 'inside "$@"' bash "$root" "$c" 2>&1 | tee -a "$log"
	rc=${PIPESTATUS[0]}
	set -e
	stage_done
	[ "$rc" = 0 ] || { echo "fresh: '$c' failed with exit status $rc"; break; }
done

if [ "$keep" = 1 ]; then
	echo "fresh: the root is kept in $root"
elif grep -qF " $root" /proc/self/mountinfo; then
	# The caches and toolchains are bind-mounted in there: never rm -rf.
	echo "fresh: something is still mounted under $root: left in place" >&2
	rc=${rc/#0/2}
else
	rm -rf "$root"
fi
echo
echo "== fresh: stage times"
printf '%s\n' "${timings[@]}"
printf '%6d s  total\n' $(( $(now) - start_all ))
last=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$log" | tail -n 1 || true)
[ -n "$last" ] && echo "$last"
exit "$rc"
