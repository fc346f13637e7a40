#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fetch the kernels of vm/kernels into the project's cache, never into
# the host's /boot or /usr/src: the image to boot and what the module
# builds against, from Debian's own packages (apt-get download with a
# private list directory per suite, dpkg-deb -x), and the linux-source of
# the line marked "debug". The host's apt configuration is not touched.
#
#   vm/fetch-kernels.sh [--update] [NAME... | source]
#   vm/fetch-kernels.sh --modules NAME MODULE...
#
# No NAME: every line and the source. A line already in the cache costs
# nothing (no network); --update asks the mirror again and replaces a
# line whose newest version changed. Layout ($TWHEEL_CACHE, default
# /var/tmp/twheel-cache; see vm/README.md):
#   apt/SUITE/               private sources.list, lists and .debs
#   kernels/NAME/env         release=, toolchain=, headers=, packages=
#   kernels/NAME/vmlinuz     the image vm/run.sh boots
#   kernels/NAME/root/       unpacked headers and kbuild (host lines)
#   kernels/NAME/host-depends  what those packages depend on (host lines)
#   kernels/NAME/modules/    --modules: MODULE.ko of the line's image, for
#                            a test that needs a driver Debian builds as a
#                            module (veth); its directory is printed
#   userland/ARCH/root/      busybox and liburing of another architecture
#                            than the build machine's (fetch_userland)
#   chroot/sid/              the chroot of the "chroot" lines (vm/chroot.sh)
#   linux-source/            linux-source-X.Y.tar.xz, env, tree/ (checkpatch,
#                            the kselftest framework: source_files below)
set -eu

here=$(cd "$(dirname "$0")" && pwd)
cache=${TWHEEL_CACHE:-/var/tmp/twheel-cache}
mirror=${TWHEEL_MIRROR:-http://deb.debian.org/debian}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
update=0
[ "${1:-}" = --update ] && { update=1; shift; }

die() { echo "fetch-kernels: $*" >&2; exit 1; }
say() { echo "fetch-kernels: $*" >&2; }

# Fields of a line of vm/kernels: name suite abi toolchain flavour [flags].
table() { awk '!/^#/ && NF >= 5' "$here/kernels"; }
row() { table | awk -v n="$1" '$1 == n'; }

# The line's flavour, the suffix of Debian's kernel package names
# (amd64, arm64, arm64-16k), set by fetch_line; its first word is the
# Debian architecture of the packages apt looks at (arch). kbuild's
# tools and linux-source come from the build machine's (amd64).
build_arch=amd64
flavour=$build_arch arch=$build_arch

# apt_dir SUITE: the private lists of SUITE for $arch (apt/SUITE for
# amd64, apt/SUITE-ARCH for another).
apt_dir() { if [ "$arch" = "$build_arch" ]; then echo "$cache/apt/$1"; else echo "$cache/apt/$1-$arch"; fi; }

# suite_apt SUITE apt-get|apt-cache ARGS...: apt on the private lists of
# SUITE for $arch, blind to the host's sources, preferences, dpkg
# architectures and installed packages.
suite_apt() {
	local d cmd=$2
	d=$(apt_dir "$1")
	shift 2
	"$cmd" -q -o Dir::Etc::sourcelist="$d/sources.list" -o Dir::Etc::sourceparts="$d/none" \
		-o Dir::Etc::preferences="$d/none/preferences" -o Dir::Etc::preferencesparts="$d/none" \
		-o Dir::State::Lists="$d/lists" -o Dir::Cache="$d/cache" -o Dir::State::status=/dev/null \
		-o Dir::Cache::pkgcache=pkgcache.bin -o Dir::Cache::srcpkgcache=srcpkgcache.bin \
		-o APT::Architecture="$arch" -o APT::Architectures="$arch" -o APT::Sandbox::User=root \
		-o Debug::NoLocking=1 "$@"
}

# Once per run, suite and arch: write its sources.list (stable suites
# with their security updates) and update its lists.
run_id="$$.$(date +%s)"
suite_update() {
	local s=$1 d
	d=$(apt_dir "$1")
	mkdir -p "$d/lists/partial" "$d/cache/archives/partial" "$d/none"
	(
		flock 8
		[ "$(cat "$d/updated" 2>/dev/null)" = "$run_id" ] && exit 0
		echo "deb [signed-by=$keyring] $mirror $s main" >"$d/sources.list"
		case $s in
		sid|unstable|experimental) ;;
		*) echo "deb [signed-by=$keyring] ${mirror%/debian}/debian-security $s-security main" >>"$d/sources.list" ;;
		esac
		say "$s ($arch): updating the package lists"
		suite_apt "$s" apt-get update >"$d/update.log" 2>&1 || { cat "$d/update.log" >&2; die "$s ($arch): apt-get update failed"; }
		echo "$run_id" >"$d/updated"
	) 8>"$d.lock"
}

# version SUITE PKG: its candidate version, empty if the suite has none.
version() {
	suite_apt "$1" apt-cache show --no-all-versions "$2" 2>/dev/null | sed -n 's/^Version: //p' | head -n 1
}

# image_pkg SUITE ABI: the package holding /boot/vmlinuz-ABI-FLAVOUR (since
# 7.x Debian puts it in linux-binary-*, linux-image-* is a meta package).
image_pkg() {
	local p
	for p in "linux-binary-$2-$flavour" "linux-image-$2-$flavour" "linux-image-$2-$flavour-unsigned"; do
		[ -n "$(version "$1" "$p")" ] && { echo "$p"; return 0; }
	done
	return 1
}

# newest_abi SUITE LINE: the newest ABI (5.10.0-46, 6.12.117+deb12, 7.3)
# of LINE that has both an image and headers.
newest_abi() {
	local re abi
	re=${2//./\\.}
	suite_apt "$1" apt-cache pkgnames linux-headers- |
		sed -nE "s/^linux-headers-(${re}([.-][0-9.-]*)?(\+deb[0-9]+)?)-$flavour$/\1/p" |
		sort -rV | while read -r abi; do
			if image_pkg "$1" "$abi" >/dev/null; then echo "$abi"; break; fi
		done
}

# headers_pkgs SUITE ABI: the headers package and the headers and kbuild
# packages it depends on.
headers_pkgs() {
	local h=linux-headers-$2-$flavour
	echo "$h"
	suite_apt "$1" apt-cache show --no-all-versions "$h" | sed -n 's/^Depends: //p' |
		tr ',' '\n' | sed -nE 's/^ *(linux-(headers|kbuild)-[^ ]*).*/\1/p'
}

# pinned SUITE PKG...: PKG=VERSION for each, as apt-get takes them.
pinned() {
	local s=$1 p
	shift
	for p; do echo "$p=$(version "$s" "$p")"; done
}

# download SUITE DIR PKG=VER...: the .debs into DIR.
download() {
	local s=$1 d=$2
	shift 2
	mkdir -p "$d"
	(cd "$d" && suite_apt "$s" apt-get download "$@") >"$d/download.log" 2>&1 ||
		{ cat "$d/download.log" >&2; die "$s: apt-get download $* failed"; }
}

# relocate_headers ROOT FINAL: Debian's headers expect to live in /usr/src
# (the flavour's Makefile includes the common one by absolute path, and
# since 7.x sets KBUILD_OUTPUT to its own); point them at FINAL, where
# ROOT will be moved.
relocate_headers() {
	local f
	for f in "$1"/usr/src/linux-headers-*/Makefile; do
		sed -i -e "s|^include /usr/src/|include $2/usr/src/|" \
			-e "s|^KBUILD_OUTPUT=/usr/src/|KBUILD_OUTPUT=$2/usr/src/|" "$f"
	done
	! grep -nE '[[:space:]=]/usr/src/' "$1"/usr/src/linux-headers-*/Makefile ||
		die "absolute /usr/src paths left in the Makefiles above"
}

# extract_vmlinuz DEB DIR: DIR/vmlinuz out of an image package, which
# has it in /boot/vmlinuz-RELEASE up to 6.x and in
# /usr/lib/modules/RELEASE/vmlinuz since 7.x; the modules stay packed.
extract_vmlinuz() {
	mkdir -p "$2/image"
	dpkg-deb --fsys-tarfile "$1" | tar -x -C "$2/image" --wildcards '*/vmlinuz*'
	find "$2/image" -type f -name 'vmlinuz*' -exec mv {} "$2/vmlinuz" \;
	rm -rf "$2/image"
	[ -f "$2/vmlinuz" ] || die "no vmlinuz in $1"
}

# host_depends DEB...: what the packages depend on outside the kernel's
# own (linux-headers, linux-kbuild, linux-image, which are unpacked
# here), one group of alternatives a line, as Debian wrote it: the tools
# a build against these headers runs on the host (pahole, gcc-N, the
# libraries of kbuild's binaries). scripts/setup.sh kernel-deps
# installs them.
# For another architecture than the build machine's, the headers' gcc-N
# (gcc-N-for-host since 7.x) is that architecture's compiler, which this
# machine has as the cross compiler gcc-N-TRIPLET.
host_depends() {
	local deb
	for deb; do
		dpkg-deb -f "$deb" Depends
	done | tr ',' '\n' | sed 's/^ *//; s/ *$//' |
		grep -Ev '^(linux-(headers|kbuild|image|binary)-)' | grep -v '^$' |
		if [ "$arch" = "$build_arch" ]; then cat; else sed -E "s/^(gcc-[0-9]+)(-for-host)?( |\$)/\1-$(triplet)\3/"; fi |
		sort -u
}

# triplet: the GNU triplet of $arch, the prefix of its cross compiler.
triplet() {
	case $arch in
	amd64) echo x86_64-linux-gnu ;;
	arm64) echo aarch64-linux-gnu ;;
	*) die "no cross compiler known for $arch" ;;
	esac
}

# complete DIR: kernels/NAME has its image, and its headers are there (a
# chroot made anew has none).
complete() {
	[ -f "$1/env" ] && [ -f "$1/vmlinuz" ] || return 1
	# shellcheck disable=SC1091,SC2154 # written by fetch_line
	(
		. "$1/env"
		case $toolchain in
		host) [ -f "$1/$headers/.config" ] && [ -f "$1/host-depends" ] ;;
		*) [ -f "$cache/chroot/sid$headers/.config" ] ;;
		esac
	)
}

# fetch_line NAME: one kernel line into kernels/NAME, replacing it only
# when complete.
fetch_line() {
	local name=$1 suite abi tc dir new img hdrs kbuild pkgs deb current headers
	read -r _ suite abi tc flavour _ < <(row "$name") || die "$name: not a line of vm/kernels"
	arch=${flavour%%-*}
	dir=$cache/kernels/$name
	if [ "$update" = 0 ] && complete "$dir"; then
		return 0
	fi
	suite_update "$suite"
	abi=$(newest_abi "$suite" "$abi")
	[ -n "$abi" ] || die "$name: no linux-image/linux-headers pair for $abi in $suite"
	img=$(pinned "$suite" "$(image_pkg "$suite" "$abi")")
	# shellcheck disable=SC2046 # package names, one a line
	hdrs=$(pinned "$suite" $(headers_pkgs "$suite" "$abi") | tr '\n' ' ')
	pkgs="$img ${hdrs% }"
	# shellcheck disable=SC1091,SC2154 # written below
	current=$(. "$dir/env" 2>/dev/null && echo "$packages") || current=
	if [ "$current" = "$pkgs" ] && complete "$dir"; then
		say "$name: $abi is current"
		return 0
	fi
	say "$name: fetching $abi from $suite ($tc build)"
	new=$cache/kernels/.$name.new
	rm -rf "$new"
	mkdir -p "$new/root"
	if [ "$tc" = host ]; then
		# kbuild's tools (fixdep, modpost) run on this machine: for another
		# architecture's headers, Debian's cross-build pairs them with the
		# build machine's linux-kbuild (Multi-Arch: foreign), same version.
		kbuild=$(printf '%s\n' $pkgs | grep '^linux-kbuild-' || true)
		# shellcheck disable=SC2086 # a list of words
		download "$suite" "$new/debs" $(printf '%s\n' $pkgs | grep -v '^linux-kbuild-')
		(arch=$build_arch && suite_update "$suite" && download "$suite" "$new/debs" $kbuild)
		host_depends "$new"/debs/*.deb >"$new/host-depends"
		for deb in "$new"/debs/*.deb; do
			case $(basename "$deb") in
			"${img%%=*}"_*) extract_vmlinuz "$deb" "$new" ;;
			*) dpkg-deb -x "$deb" "$new/root" ;;
			esac
		done
		rm -rf "$new/debs"
		relocate_headers "$new/root" "$dir/root"
		headers=root/usr/src/linux-headers-$abi-$flavour
		[ -f "$new/$headers/.config" ] || die "$name: no $headers/.config in the packages"
	elif [ "$arch" = "$build_arch" ]; then
		download "$suite" "$new/debs" "$img"
		extract_vmlinuz "$new"/debs/"${img%%=*}"_*.deb "$new"
		rm -rf "$new/debs"
		# shellcheck disable=SC2086
		"$here/chroot.sh" install $hdrs >"$new/chroot-install.log" 2>&1 ||
			{ tail -n 20 "$new/chroot-install.log" >&2; die "$name: installing $hdrs in the chroot failed"; }
		headers=/usr/src/linux-headers-$abi-$flavour
	else
		# Another architecture's headers in the chroot, whose dpkg knows
		# amd64 only: unpacked under /twheel/kernels/NAME there, with the
		# chroot's own linux-kbuild of that version (Multi-Arch: foreign)
		# and Debian's cross compiler installed by apt.
		kbuild=$(printf '%s\n' $pkgs | grep '^linux-kbuild-' || true)
		# shellcheck disable=SC2086 # a list of words
		download "$suite" "$new/debs" $(printf '%s\n' $pkgs | grep -v '^linux-kbuild-')
		inside=/twheel/kernels/$name
		croot=$cache/chroot/sid$inside
		rm -rf "$croot.new"
		mkdir -p "$croot.new"
		for deb in "$new"/debs/*.deb; do
			case $(basename "$deb") in
			"${img%%=*}"_*) extract_vmlinuz "$deb" "$new" ;;
			*) dpkg-deb -x "$deb" "$croot.new" ;;
			esac
		done
		# shellcheck disable=SC2046 # package names
		"$here/chroot.sh" install $kbuild $(host_depends "$new"/debs/linux-headers-*"-${flavour}_"*.deb |
			sed -nE "s/^(gcc-[0-9]+-$(triplet))( .*)?\$/\1/p") >"$new/chroot-install.log" 2>&1 ||
			{ tail -n 20 "$new/chroot-install.log" >&2; die "$name: installing $kbuild and the cross compiler in the chroot failed"; }
		rm -rf "$new/debs"
		relocate_headers "$croot.new" "$inside"
		mkdir -p "$croot.new/usr/lib"
		ln -s "/usr/lib/${kbuild%%=*}" "$croot.new/usr/lib/${kbuild%%=*}"
		rm -rf "$croot"
		mv "$croot.new" "$croot"
		headers=$inside/usr/src/linux-headers-$abi-$flavour
	fi
	[ "$tc" = host ] || rm -rf "$new/root"
	cat >"$new/env" <<EOF
# Written by vm/fetch-kernels.sh. headers: in the chroot for toolchain=chroot;
# cross_compile: the prefix of Debian's cross compiler for arch.
release=$abi-$flavour
arch=$arch
cross_compile=$([ "$arch" = "$build_arch" ] || echo "$(triplet)-")
suite=$suite
toolchain=$tc
headers=$headers
packages="$pkgs"
EOF
	rm -rf "$dir"
	mv "$new" "$dir"
	say "$name: $abi ready in $dir"
}

# What the project takes from linux-source, unpacked once into
# linux-source/tree/ (never into the repo): checkpatch and its data
# files (make style), checker-valid.sh (the chroot's kbuild lacks it),
# and the kselftest framework the tests build on (kselftest.h,
# kselftest_harness.h, lib.mk, the TAP helpers and the runner, and the
# top Makefile, with the subarch.include it reads, that builds and
# installs a target: scripts/check.sh drops selftests/ into a copy), and
# the kernel's memory model, which herd7 runs litmus/ against.
source_files='scripts/checkpatch.pl scripts/spelling.txt scripts/const_structs.checkpatch
	scripts/checker-valid.sh scripts/subarch.include
	tools/testing/selftests/Makefile
	tools/testing/selftests/kselftest.h tools/testing/selftests/kselftest_harness.h
	tools/testing/selftests/lib.mk tools/testing/selftests/run_kselftest.sh
	tools/testing/selftests/kselftest/ktap_helpers.sh tools/testing/selftests/kselftest/runner.sh
	tools/testing/selftests/kselftest/module.sh tools/testing/selftests/kselftest/prefix.pl
	tools/testing/selftests/kselftest/ksft.py
	tools/memory-model/linux-kernel.bell tools/memory-model/linux-kernel.cat
	tools/memory-model/linux-kernel.cfg tools/memory-model/linux-kernel.def
	tools/memory-model/lock.cat'

# unpack_tree DIR: source_files out of DIR's tarball into DIR/tree, put in
# place whole (others may be reading the old tree meanwhile).
unpack_tree() {
	local f want=()
	for f in $source_files; do want+=("*/$f"); done
	rm -rf "$1/tree.new"
	mkdir -p "$1/tree.new"
	# shellcheck disable=SC1090,SC1091,SC2154 # written by fetch_source
	tar -xf "$1/$(. "$1/env" && echo "$tarball")" -C "$1/tree.new" --strip-components=1 \
		--wildcards "${want[@]}"
	rm -rf "$1/tree"
	mv "$1/tree.new" "$1/tree"
}

# tree_complete DIR: DIR/tree has every file of source_files.
tree_complete() {
	local f
	for f in $source_files; do [ -f "$1/tree/$f" ] || return 1; done
}

# The linux-source of the line marked debug: the tarball, and the files
# above unpacked in tree/.
fetch_source() {
	local dir=$cache/linux-source suite abi line pkg ver new
	read -r line suite abi _ < <(table | awk '$6 == "debug"') || die "no line marked debug in vm/kernels"
	pkg=linux-source-$abi
	if [ "$update" = 0 ] && [ -f "$dir/env" ]; then
		tree_complete "$dir" || unpack_tree "$dir"
		return 0
	fi
	suite_update "$suite"
	ver=$(version "$suite" "$pkg")
	[ -n "$ver" ] || die "$suite has no $pkg"
	# shellcheck disable=SC1091,SC2154 # written below
	if [ "$(. "$dir/env" 2>/dev/null && echo "$version")" = "$ver" ]; then
		say "source: $pkg $ver is current"
		return 0
	fi
	say "source: fetching $pkg $ver from $suite"
	new=$cache/.linux-source.new
	rm -rf "$new"
	download "$suite" "$new/debs" "$pkg=$ver"
	dpkg-deb --fsys-tarfile "$new"/debs/"$pkg"_*.deb | tar -x -C "$new" --strip-components=3 ./usr/src/
	rm -rf "$new/debs"
	printf 'line=%s\npackage=%s\nversion=%s\ntarball=%s\n' "$line" "$pkg" "$ver" "$pkg.tar.xz" >"$new/env"
	unpack_tree "$new"
	rm -rf "$dir"
	mv "$new" "$dir"
	say "source: $pkg $ver ready in $dir"
}

# What the VMs and test programs of another architecture need from its
# userland, from Debian 12's packages of that architecture (the build
# machine's release, so its cross compiler's glibc): busybox-static,
# the guest's shell and tools (vm/run.sh), and liburing-dev, whose
# static liburing.a uring_test links. Unpacked into userland/ARCH/root
# (bin/busybox, usr/include, usr/lib/TRIPLET), fetched once.
userland_suite=bookworm
userland_pkgs='busybox-static liburing-dev'

fetch_userland() {
	local dir=$cache/userland/$arch new deb
	[ -x "$dir/root/bin/busybox" ] && [ -f "$dir/root/usr/lib/$(triplet)/liburing.a" ] && return 0
	say "userland: fetching $userland_pkgs for $arch from $userland_suite"
	new=$cache/userland/.$arch.new
	rm -rf "$new"
	mkdir -p "$new/root"
	suite_update "$userland_suite"
	# shellcheck disable=SC2046,SC2086 # package names
	download "$userland_suite" "$new/debs" $(pinned "$userland_suite" $userland_pkgs)
	for deb in "$new"/debs/*.deb; do dpkg-deb -x "$deb" "$new/root"; done
	rm -rf "$new/debs"
	[ -x "$new/root/bin/busybox" ] || die "userland: no bin/busybox in busybox-static"
	rm -rf "$dir"
	mv "$new" "$dir"
	say "userland: $arch ready in $dir"
}

# fetch_modules NAME MODULE...: MODULE.ko (a path under the release's
# kernel/, e.g. drivers/net/veth) out of the image package of NAME, at
# the version the line was fetched at, decompressed into
# kernels/NAME/modules/ (busybox's insmod takes no .ko.xz).
fetch_modules() {
	local name=$1 dir new m rel img suite have=1 packages release
	shift
	dir=$cache/kernels/$name
	read -r _ suite _ _ flavour _ < <(row "$name") || die "$name: not a line of vm/kernels"
	arch=${flavour%%-*}
	for m; do [ -f "$dir/modules/${m##*/}.ko" ] || have=0; done
	if [ $have = 0 ]; then
		[ -f "$dir/env" ] || die "$name: not fetched (vm/fetch-kernels.sh $name)"
		# shellcheck disable=SC1091,SC2154 # written by fetch_line
		packages=$(. "$dir/env" && echo "$packages")
		# shellcheck disable=SC1091,SC2154
		release=$(. "$dir/env" && echo "$release")
		# shellcheck disable=SC2086 # a list of words
		img=$(printf '%s\n' $packages | grep -E '^linux-(image|binary)-' | head -n 1)
		new=$dir/.modules.new
		rm -rf "$new"
		suite_update "$suite"
		download "$suite" "$new/debs" "$img"
		mkdir -p "$new/image" "$new/modules"
		for m; do
			dpkg-deb --fsys-tarfile "$new"/debs/*.deb |
				tar -x -C "$new/image" --wildcards "*/modules/$release/kernel/$m.ko*" ||
				die "$name: no $m.ko in $img"
			rel=$(find "$new/image" -name "${m##*/}.ko*" | head -n 1)
			case $rel in
			*.xz) xz -dc "$rel" >"$new/modules/${m##*/}.ko" ;;
			*.zst) zstd -qdc "$rel" >"$new/modules/${m##*/}.ko" ;;
			*) cp "$rel" "$new/modules/${m##*/}.ko" ;;
			esac
		done
		cp -n "$dir"/modules/*.ko "$new/modules/" 2>/dev/null || true
		rm -rf "$dir/modules"
		mv "$new/modules" "$dir/modules"
		rm -rf "$new"
	fi
	echo "$dir/modules"
}

[ -r "$keyring" ] || die "$keyring missing (package debian-archive-keyring)"
mkdir -p "$cache/kernels"
if [ "${1:-}" = --modules ]; then
	[ $# -ge 3 ] || die "--modules NAME MODULE..."
	shift
	(flock 9; fetch_modules "$@") 9>"$cache/kernels/$1.lock"
	exit
fi
# shellcheck disable=SC2046 # names, one a line
[ $# -gt 0 ] || set -- $(table | awk '{ print $1 }') source
# One fetcher per kernel at a time (check, demo and vm/run.sh may run side
# by side); a second one waits, then finds the kernel there.
for name; do
	case $name in
	source) (flock 9; fetch_source) 9>"$cache/kernels/source.lock" ;;
	*)
		(flock 9; fetch_line "$name") 9>"$cache/kernels/$name.lock"
		arch=$(row "$name" | awk '{ print $5 }') arch=${arch%%-*}
		if [ "$arch" != "$build_arch" ]; then
			mkdir -p "$cache/userland"
			(flock 9; fetch_userland) 9>"$cache/userland/$arch.lock"
		fi ;;
	esac
done
