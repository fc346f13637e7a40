# SPDX-License-Identifier: GPL-2.0
# Step (chroot): build the real-world examples of examples/ against the
# installed libtwheel-dev and the image's libsqlite3-dev, as a user of
# the packages would (make INSTALLED=1: pkg-config, shared libraries),
# and install them with their systemd units for the steps fdstore,
# orders and idle-server. In the chroot because compiling under
# software emulation is slow.
. "$T/lib.sh"

src=$T/examples
[ -f "$src/Makefile" ] || fail "no $src: tests/server/run.sh copies examples/ into the image"
dpkg -s libsqlite3-dev >/dev/null 2>&1 || fail "libsqlite3-dev is not in the image (build-image.sh)"
make -C "$src" clean >&2
# The three installed here: bpf-refresh needs clang and libbpf, which a
# server of the packages has no use for; it runs in the check's 6.12 VM.
make -C "$src" INSTALLED=1 EXAMPLES="idle-server orders fdstore" >&2 ||
	fail "make -C examples INSTALLED=1 failed (see the log)"
install -m 755 "$src/fdstore/fdstore" /usr/local/bin/twheel-fdstore
install -m 755 "$src/orders/orders" /usr/local/bin/twheel-orders
install -m 755 "$src/idle-server/idle-server" /usr/local/bin/twheel-idle-server
install -m 644 "$src/fdstore/twheel-fdstore-example.service" \
	"$src/orders/twheel-orders-example.service" /etc/systemd/system/
libs=$(ldd /usr/local/bin/twheel-orders | awk '/libtwheel|libsqlite3/ { print $1 }' | tr '\n' ' ')
case $libs in
*libtwheel.so.1*libsqlite3.so.0*|*libsqlite3.so.0*libtwheel.so.1*) ;;
*) fail "twheel-orders is not linked with the installed libtwheel.so.1 and libsqlite3.so.0: '$libs'" ;;
esac
ok "built idle-server, orders, fdstore with pkg-config against libtwheel $(pkg-config --modversion libtwheel) and sqlite $(pkg-config --modversion sqlite3); installed with their units"
