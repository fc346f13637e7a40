# SPDX-License-Identifier: MIT
#
# Included by each example's Makefile: how to find libtwheel.
#
#   make               static, against this tree's lib/ and uapi/: one
#                      binary runs in the test VM (no shared libraries
#                      there) and on a server alike
#   make INSTALLED=1   dynamic, against an installed libtwheel-dev
#                      (pkg-config), as a user of the packages builds

TOP		:= $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/..)

CC		?= cc
CFLAGS		?= -O2 -g
override CFLAGS	+= -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Werror

ifdef INSTALLED
override CFLAGS	+= $(shell pkg-config --cflags libtwheel)
TWHEEL_LIBS	:= $(shell pkg-config --libs libtwheel)
TWHEEL_DEPS	:=
LDSTATIC	:=
else
override CFLAGS	+= -I$(TOP)/lib -I$(TOP)/uapi
TWHEEL_LIBS	:= $(TOP)/lib/libtwheel.a
TWHEEL_DEPS	:= $(TOP)/lib/libtwheel.a $(TOP)/lib/twheel.h $(TOP)/uapi/linux/twheel.h
LDSTATIC	:= -static

$(TOP)/lib/libtwheel.a: FORCE
	$(MAKE) -C $(TOP)/lib libtwheel.a

.PHONY: FORCE
FORCE:
endif
