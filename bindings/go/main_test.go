// SPDX-License-Identifier: LGPL-2.1 OR MIT

// vm/run.sh runs every program it is given, so the test binary passed
// beside vm-test.sh is also started alone, bare, from /tests: that run
// has nothing to add to the script's, and ends at once.

//go:build linux

package twheel

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestMain(m *testing.M) {
	if len(os.Args) == 1 && strings.HasPrefix(os.Args[0], "/tests/") {
		fmt.Println("twheel.test: started bare by the VM: vm-test.sh runs the tests")
		os.Exit(0)
	}
	os.Exit(m.Run())
}
