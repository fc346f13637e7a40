# SPDX-License-Identifier: MIT
#
# Included by each example's Makefile: where libtwheel and the uapi
# header of this tree are, and how to build the library. The examples
# are linked statically, so that one binary runs in the test VM (no
# shared libraries there) and on a Debian 12 server alike. Against an
# installed libtwheel-dev, build with
#	cc -O2 -o PROG *.c $(pkg-config --cflags --libs libtwheel)
# instead (see each README).

TOP		:= $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/..)
LIBTWHEEL	:= $(TOP)/lib/libtwheel.a
TWHEEL_HEADERS	:= $(TOP)/lib/twheel.h $(TOP)/uapi/linux/twheel.h

CC		?= cc
CFLAGS		?= -O2 -g
override CFLAGS	+= -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Werror -I$(TOP)/lib -I$(TOP)/uapi

$(LIBTWHEEL): FORCE
	$(MAKE) -C $(TOP)/lib libtwheel.a

.PHONY: FORCE
FORCE:
