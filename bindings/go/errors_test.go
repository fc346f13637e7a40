// SPDX-License-Identifier: LGPL-2.1 OR MIT

// Error values on the host: errors.Is with the sentinels, the errno and
// the standard library's own (fs.ErrNotExist, errors.ErrUnsupported,
// os.ErrClosed, context errors), and messages naming the op and the id.

//go:build linux

package twheel

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"testing"
)

func TestErrorsMatchSentinelsAndErrnos(t *testing.T) {
	cases := []struct {
		errno    syscall.Errno
		sentinel error
	}{
		{syscall.ENOENT, ErrNotFound},
		{syscall.EEXIST, ErrExists},
		{syscall.ENOSPC, ErrFull},
		{syscall.EINVAL, ErrInvalid},
		{syscall.EBADFD, ErrNotSetUp},
		{syscall.ENOTTY, errors.ErrUnsupported},
	}
	for _, c := range cases {
		err := opError("refresh", 42, c.errno)
		if !errors.Is(err, c.sentinel) || !errors.Is(err, c.errno) {
			t.Errorf("%v: not %v and %v", err, c.sentinel, c.errno)
		}
		for _, o := range cases {
			if o.errno != c.errno && errors.Is(err, o.sentinel) {
				t.Errorf("%v is also %v", err, o.sentinel)
			}
		}
	}
	if err := opError("query", 1, syscall.ENOENT); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ENOENT is not fs.ErrNotExist: %v", err)
	}
	if err := callError("read", os.ErrClosed); !errors.Is(err, ErrClosed) || errors.Is(err, ErrNotFound) {
		t.Errorf("closed: %v", err)
	}
	if err := callError("read", context.Canceled); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v", err)
	}
	if err := opError("add", 1, nil); err != nil {
		t.Errorf("nil wraps to %v", err)
	}
}

func TestErrorMessagesNameOpAndId(t *testing.T) {
	cases := map[string]error{
		"twheel: refresh id 42: not live (ENOENT)":                                opError("refresh", 42, syscall.ENOENT),
		"twheel: add id 18446744073709551615: already live (EEXIST)":              opError("add", ^uint64(0), syscall.EEXIST),
		"twheel: batch: wheel full (cap or entry limit reached) (ENOSPC)":         callError("batch", syscall.ENOSPC),
		"twheel: read: file already closed":                                       callError("read", os.ErrClosed),
		"twheel: touch slot 3: invalid argument (EINVAL): slot outside the table": (&table{slots: make([]uint64, 1)}).store(3, 1),
		"twheel: dump: interrupted system call (EINTR)":                           callError("dump", syscall.EINTR),
	}
	for want, err := range cases {
		if err == nil || err.Error() != want {
			t.Errorf("got %q, want %q", err, want)
		}
	}
	if msg := invalid("add", "negative timeout -1s").Error(); !strings.HasSuffix(msg, "(EINVAL): negative timeout -1s") {
		t.Errorf("detail: %q", msg)
	}
}
