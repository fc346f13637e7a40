// SPDX-License-Identifier: LGPL-2.1 OR MIT

// abi.go against uapi/linux/twheel.h: each raw struct has the header's
// fields, in order, of the header's sizes at the header's offsets; each
// constant has the header's value; each command number is the one the
// header's _IOW/_IOWR gives. Skipped where the header is not at hand
// (the test binary in the VM, the module as downloaded).

//go:build linux

package twheel

import (
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// headerPath is the uapi header in the tree; TWHEEL_UAPI_HEADER names
// another copy (vm-test.sh gives the one vm-bins puts beside the binary).
const headerPath = "../../uapi/linux/twheel.h"

func readHeader(t *testing.T) string {
	t.Helper()
	path := os.Getenv("TWHEEL_UAPI_HEADER")
	if path == "" {
		path = headerPath
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("no uapi header here: %v", err)
	}
	return string(b)
}

type cField struct {
	name string
	size uintptr
}

// cStructs parses every "struct twheel_NAME { __u64 a; __s32 b; ... };".
func cStructs(t *testing.T, h string) map[string][]cField {
	t.Helper()
	structs := map[string][]cField{}
	re := regexp.MustCompile(`(?s)struct (twheel_\w+) \{(.*?)\};`)
	fieldRe := regexp.MustCompile(`^\s*__([us])(8|16|32|64) (\w+);`)
	for _, m := range re.FindAllStringSubmatch(h, -1) {
		for _, line := range strings.Split(m[2], "\n") {
			if strings.TrimSpace(line) == "" {
				continue
			}
			f := fieldRe.FindStringSubmatch(line)
			if f == nil {
				t.Fatalf("struct %s: cannot parse %q", m[1], line)
			}
			bits, _ := strconv.Atoi(f[2])
			structs[m[1]] = append(structs[m[1]], cField{f[3], uintptr(bits / 8)})
		}
	}
	return structs
}

var rawStructs = map[string]any{
	"twheel_setup_args":          rawSetup{},
	"twheel_op":                  rawOp{},
	"twheel_batch_args":          rawBatch{},
	"twheel_event":               rawEvent{},
	"twheel_refresh_args":        rawRefresh{},
	"twheel_dump_entry":          rawDumpEntry{},
	"twheel_dump_args":           rawDump{},
	"twheel_uring_cmd":           rawUringCmd{},
	"twheel_touch_register_args": rawTouchRegister{},
	"twheel_ns_limit_args":       rawNsLimit{},
}

func TestRawStructsMatchTheHeader(t *testing.T) {
	cs := cStructs(t, readHeader(t))
	if len(cs) != len(rawStructs) {
		t.Errorf("header has %d structs, abi.go %d", len(cs), len(rawStructs))
	}
	for name, fields := range cs {
		v, ok := rawStructs[name]
		if !ok {
			t.Errorf("struct %s has no raw struct in abi.go", name)
			continue
		}
		typ := reflect.TypeOf(v)
		if typ.NumField() != len(fields) {
			t.Errorf("%s: %d fields in the header, %d in %s", name, len(fields), typ.NumField(), typ.Name())
			continue
		}
		var off uintptr
		for i, cf := range fields {
			// C alignment: every field here is naturally aligned.
			off = (off + cf.size - 1) &^ (cf.size - 1)
			gf := typ.Field(i)
			if gf.Tag.Get("uapi") != cf.name || gf.Type.Size() != cf.size || gf.Offset != off {
				t.Errorf("%s.%s (size %d at %d) is %s %q (size %d at %d)", name, cf.name, cf.size, off,
					typ.Name(), gf.Tag.Get("uapi"), gf.Type.Size(), gf.Offset)
			}
			off += cf.size
		}
		if off = (off + 7) &^ 7; typ.Size() != off {
			t.Errorf("%s: size %d in C, %d in Go", name, off, typ.Size())
		}
	}
}

// cDefines parses "#define NAME VALUE" where VALUE is a number or (1U << n).
func cDefines(h string) map[string]uint64 {
	defs := map[string]uint64{}
	re := regexp.MustCompile(`(?m)^#define\s+(TWHEEL_\w+)\s+\(?([0-9A-Fa-fxX]+)(?:ULL|UL|U)?(?:\s*<<\s*(\d+))?\)?`)
	for _, m := range re.FindAllStringSubmatch(h, -1) {
		v, err := strconv.ParseUint(m[2], 0, 64)
		if err != nil {
			continue
		}
		if m[3] != "" {
			s, _ := strconv.Atoi(m[3])
			v <<= s
		}
		defs[m[1]] = v
	}
	return defs
}

func TestConstantsMatchTheHeader(t *testing.T) {
	h := readHeader(t)
	defs := cDefines(h)
	want := map[string]uint64{
		"TWHEEL_TICK_MIN_NS":       tickMinNS,
		"TWHEEL_TICK_MAX_NS":       tickMaxNS,
		"TWHEEL_MAX_TIMEOUT_TICKS": maxTimeoutTicks,
		"TWHEEL_MAX_TIMEOUT_NS":    maxTimeoutNS,
		"TWHEEL_SETUPF_TOUCH":      setupfTouch,
		"TWHEEL_SETUPF_TOUCH_USER": setupfTouchUser,
		"TWHEEL_TOUCH_MAX_SLOTS":   touchMaxSlots,
		"TWHEEL_OPF_TIMEOUT":       opfTimeout,
		"TWHEEL_OPF_ADD_IF_ABSENT": opfAddIfAbsent,
		"TWHEEL_OPF_ABSTIME":       opfAbstime,
		"TWHEEL_OPF_TOUCH":         opfTouch,
		"TWHEEL_SLOT_NONE":         slotNone,
		"TWHEEL_NS_LIMITF_SET":     nsLimitfSet,
		"TWHEEL_IOC_MAGIC":         iocMagic,
	}
	for name, v := range want {
		got, ok := defs[name]
		if !ok {
			t.Errorf("%s not found in the header", name)
		} else if got != v {
			t.Errorf("%s is %#x in the header, %#x in abi.go", name, got, v)
		}
	}
	// Every flag and bound the header defines is mirrored (the device
	// path, the dump end and the commands are checked apart).
	for name := range defs {
		if _, ok := want[name]; !ok && !strings.HasPrefix(name, "TWHEEL_IOC_") {
			t.Errorf("%s is in the header but not in abi.go's checked list", name)
		}
	}
	if !strings.Contains(h, `#define TWHEEL_DEVICE		"`+devicePath+`"`) {
		t.Errorf("TWHEEL_DEVICE is not %q", devicePath)
	}
	if !strings.Contains(h, "#define TWHEEL_DUMP_END		(~0ULL)") || dumpEnd != ^uint64(0) {
		t.Errorf("TWHEEL_DUMP_END is not ~0")
	}
	ops := regexp.MustCompile(`(TWHEEL_OP_\w+)\s*=\s*(\d+),`).FindAllStringSubmatch(h, -1)
	wantOps := map[string]Kind{"TWHEEL_OP_ADD": OpAdd, "TWHEEL_OP_REFRESH": OpRefresh,
		"TWHEEL_OP_CANCEL": OpCancel, "TWHEEL_OP_QUERY": OpQuery}
	if len(ops) != len(wantOps) {
		t.Errorf("header has %d op codes, abi.go %d", len(ops), len(wantOps))
	}
	for _, m := range ops {
		v, _ := strconv.Atoi(m[2])
		if k, ok := wantOps[m[1]]; !ok || uint32(k) != uint32(v) {
			t.Errorf("%s = %d in the header, %d here", m[1], v, k)
		}
	}
}

func TestCommandsMatchTheHeader(t *testing.T) {
	h := readHeader(t)
	cs := cStructs(t, h)
	cmds := map[string]uintptr{"TWHEEL_IOC_SETUP": iocSetup, "TWHEEL_IOC_OP": iocOp,
		"TWHEEL_IOC_BATCH": iocBatch, "TWHEEL_IOC_DUMP": iocDump, "TWHEEL_IOC_REFRESH": iocRefresh,
		"TWHEEL_IOC_TOUCH_REGISTER": iocTouchRegister, "TWHEEL_IOC_NS_LIMIT": iocNsLimit}
	re := regexp.MustCompile(`#define (TWHEEL_IOC_\w+)\s+_IO(W|WR)\(TWHEEL_IOC_MAGIC, (\d+), struct (\w+)\)`)
	found := 0
	for _, m := range re.FindAllStringSubmatch(h, -1) {
		found++
		nr, _ := strconv.Atoi(m[3])
		var size uintptr
		for _, f := range cs[m[4]] {
			size = (size+f.size-1)&^(f.size-1) + f.size
		}
		size = (size + 7) &^ 7
		dir := uintptr(iocWrite)
		if m[2] == "WR" {
			dir |= iocRead
		}
		want := dir<<30 | size<<16 | iocMagic<<8 | uintptr(nr)
		if got, ok := cmds[m[1]]; !ok || got != want {
			t.Errorf("%s: %#x from the header, %#x in abi.go", m[1], want, got)
		}
	}
	if found != len(cmds) {
		t.Errorf("header has %d commands, abi.go %d", found, len(cmds))
	}
}

func TestEventIsTheKernelRecord(t *testing.T) {
	if unsafe.Sizeof(Event{}) != 24 || eventSize != 24 {
		t.Fatalf("Event is %d bytes, the record %d", unsafe.Sizeof(Event{}), eventSize)
	}
}
