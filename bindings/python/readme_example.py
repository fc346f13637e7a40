# SPDX-License-Identifier: LGPL-2.1 OR MIT
"""Print the README's Python example: the first ```python block of the
section "## From Python" of the README given (the main README's),
exactly as it stands, so that
`make readme-test` runs what a reader copies. Exit 1 if there is none.

    python3 readme_example.py README.md > example.py
"""

from __future__ import annotations

import sys


def extract(text: str) -> str:
    lines = text.splitlines()
    try:
        start = lines.index("## From Python")
    except ValueError:
        return ""
    block: list[str] = []
    inside = False
    for line in lines[start + 1:]:
        if not inside and line.startswith("## "):
            break
        if not inside and line == "```python":
            inside = True
        elif inside and line == "```":
            return "\n".join(block) + "\n"
        elif inside:
            block.append(line)
    return ""


def main() -> int:
    with open(sys.argv[1], encoding="utf-8") as f:
        code = extract(f.read())
    if not code:
        print(f"readme_example: no python block under '## From Python' in {sys.argv[1]}",
              file=sys.stderr)
        return 1
    sys.stdout.write(code)
    return 0


if __name__ == "__main__":
    sys.exit(main())
