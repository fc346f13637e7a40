// SPDX-License-Identifier: LGPL-2.1 OR MIT

// Error values on the host: errors.Is with the sentinels, the errno and
// the standard library's own (fs.ErrNotExist, errors.ErrUnsupported,
// os.ErrClosed, context errors), messages naming the op and the id, and
// a device that is missing or refused (ErrUnavailable, never ErrNotFound).

//go:build linux

package twheel

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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
		if errors.Is(err, ErrUnavailable) {
			t.Errorf("%v is ErrUnavailable", err)
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

// checkUnavailable: @err is Open's error for @errno of open(2) of @path,
// ErrUnavailable and @std (fs.ErrNotExist or fs.ErrPermission) and not
// the other, never ErrNotFound, with a message that says what to check.
func checkUnavailable(t *testing.T, err error, path string, errno syscall.Errno, std error, hint string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Op != "open" {
		t.Fatalf("%v: not an *Error of open", err)
	}
	if !errors.Is(err, ErrUnavailable) || !errors.Is(err, std) || !errors.Is(err, errno) {
		t.Errorf("%v: not ErrUnavailable, %v and %v", err, std, errno)
	}
	other := map[error]error{fs.ErrNotExist: fs.ErrPermission, fs.ErrPermission: fs.ErrNotExist}[std]
	for _, not := range []error{ErrNotFound, ErrExists, ErrFull, ErrInvalid, ErrNotSetUp, ErrClosed,
		errors.ErrUnsupported, other} {
		if errors.Is(err, not) {
			t.Errorf("%v is also %v", err, not)
		}
	}
	want := "twheel: open: " + errno.Error() + " (" + unixName(errno) + "): " + path + ": " + hint
	if err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
}

func unixName(errno syscall.Errno) string {
	return map[syscall.Errno]string{syscall.ENOENT: "ENOENT", syscall.ENODEV: "ENODEV",
		syscall.ENXIO: "ENXIO", syscall.EACCES: "EACCES", syscall.EPERM: "EPERM"}[errno]
}

func TestOpenOfAMissingDeviceIsErrUnavailableNotErrNotFound(t *testing.T) {
	path := filepath.Join(t.TempDir(), "twheel")
	w, err := openAt(path, Options{Tick: time.Millisecond})
	if w != nil {
		w.Close()
		t.Fatalf("%s opened", path)
	}
	checkUnavailable(t, err, path, syscall.ENOENT, fs.ErrNotExist, "is the twheel module loaded? (modprobe twheel)")

	// Open itself, where the module is not loaded (the host).
	if _, err := os.Stat(devicePath); err == nil {
		t.Logf("%s exists: Open of the missing device checked through openAt alone", devicePath)
		return
	}
	_, err = Open(Options{Tick: time.Millisecond})
	checkUnavailable(t, err, devicePath, syscall.ENOENT, fs.ErrNotExist, "is the twheel module loaded? (modprobe twheel)")
}

func TestOpenOfANodeWithoutItsDriverIsErrUnavailable(t *testing.T) {
	// open(2) of a socket is ENXIO, as of a device node whose driver is
	// not there.
	path := filepath.Join(t.TempDir(), "sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Skipf("no unix socket here: %v", err)
	}
	defer l.Close()
	_, err = openAt(path, Options{Tick: time.Millisecond})
	checkUnavailable(t, err, path, syscall.ENXIO, fs.ErrNotExist, "is the twheel module loaded? (modprobe twheel)")
	// ENODEV, which a real device node without its driver gives, is the
	// same error.
	checkUnavailable(t, openError(devicePath, syscall.ENODEV), devicePath, syscall.ENODEV, fs.ErrNotExist,
		"is the twheel module loaded? (modprobe twheel)")
}

func TestOpenRefusedIsErrUnavailableAndErrPermission(t *testing.T) {
	hint := "is the user in group twheel?"
	for _, errno := range []syscall.Errno{syscall.EACCES, syscall.EPERM} {
		checkUnavailable(t, openError(devicePath, errno), devicePath, errno, fs.ErrPermission, hint)
	}
	// Another failure of open(2) is only its errno, and says no more.
	err := openError(devicePath, syscall.EMFILE)
	if errors.Is(err, ErrUnavailable) || !errors.Is(err, syscall.EMFILE) ||
		err.Error() != "twheel: open: too many open files (EMFILE): /dev/twheel" {
		t.Errorf("EMFILE: %v", err)
	}
}

func TestOpenOfAFileThatMayNotBeOpenedIsErrPermission(t *testing.T) {
	if os.Geteuid() == 0 {
		// Root opens a file of mode 0: the test runs again as nobody.
		runAsNobody(t, "TestOpenOfAFileThatMayNotBeOpenedIsErrPermission")
		return
	}
	path := filepath.Join(t.TempDir(), "twheel")
	if err := os.WriteFile(path, nil, 0); err != nil {
		t.Fatal(err)
	}
	_, err := openAt(path, Options{Tick: time.Millisecond})
	checkUnavailable(t, err, path, syscall.EACCES, fs.ErrPermission, "is the user in group twheel?")
}

func TestErrorsOfOpsAreNotErrUnavailable(t *testing.T) {
	// ENODEV of a touch (no table) and ENOENT of "setup" are not the
	// device's absence.
	for _, err := range []error{errNoTable(3), callError("setup", syscall.ENOENT), opError("query", 1, syscall.EACCES)} {
		if errors.Is(err, ErrUnavailable) {
			t.Errorf("%v is ErrUnavailable", err)
		}
	}
}

// runAsNobody runs the test @name of this binary again as uid and gid
// 65534, which must pass: a copy of the binary in a directory of its own
// that nobody may enter (the go tool's build directory is root's alone),
// with TMPDIR there too, so that the test's t.TempDir is nobody's.
func runAsNobody(t *testing.T, name string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "twheel-nobody")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "twheel.test")
	data, err := os.ReadFile(self)
	if err == nil {
		err = os.WriteFile(bin, data, 0o755)
	}
	if err == nil {
		err = os.Chmod(dir, 0o777)
	}
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^"+name+"$", "-test.count=1", "-test.v")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+name) {
		t.Fatalf("%s as nobody: %v\n%s", name, err, out)
	}
}
