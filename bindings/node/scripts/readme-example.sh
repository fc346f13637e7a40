#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The Node example of a README (the main README's), as a reader copies
# it: the first ```js block of its section "## From Node.js"; with
# --no-module, what that section says the example ends with on a host
# without the module: the first line of the first plain ``` block after
# the example, which install-check.sh looks for in the example's stderr
# there. Exit 1 if there is none.
#   scripts/readme-example.sh [--no-module] README
set -eu

want=js
if [ "$1" = --no-module ]; then
	want=plain
	shift
fi
awk -v want="$want" '
	!s { if ($0 == "## From Node.js") s = 1; next }
	!inblk && /^## / { exit }
	!inblk && /^```/ { inblk = 1; kind = substr($0, 4); next }
	inblk && $0 == "```" {
		inblk = 0
		if (kind == "js" && !seen) { seen = 1; if (want == "js") exit }
		else if (kind == "" && seen && want == "plain") exit
		next
	}
	inblk && want == "js" && kind == "js" && !seen { print; n++ }
	inblk && want == "plain" && kind == "" && seen && !n { print; n++ }
	END { exit n ? 0 : 1 }
' "$1" || { echo "readme-example: no $want block under '## From Node.js' in $1" >&2; exit 1; }
