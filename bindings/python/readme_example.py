# SPDX-License-Identifier: LGPL-2.1 OR MIT
"""Print the README's Python example: the first ```python block of the
section "## From Python" of the README given (the main README's),
exactly as it stands, so that `make readme-test` runs what a reader
copies; with --no-module, what the README says that example ends with on
a host without the module: the first plain ``` block after it, which
`make install-check` compares with the example's last line of output
there. Exit 1 if there is none.

    python3 readme_example.py README.md > example.py
    python3 readme_example.py --no-module README.md > expected
"""

from __future__ import annotations

import sys


def blocks(text: str) -> list[tuple[str, str]]:
    """The fenced blocks of the section "## From Python" of @text, in
    order: (info string, content)."""
    lines = text.splitlines()
    try:
        start = lines.index("## From Python")
    except ValueError:
        return []
    found: list[tuple[str, str]] = []
    info: str | None = None
    block: list[str] = []
    for line in lines[start + 1:]:
        if info is None and line.startswith("## "):
            break
        if info is None and line.startswith("```"):
            info, block = line[3:], []
        elif info is not None and line == "```":
            found.append((info, "\n".join(block) + "\n"))
            info = None
        elif info is not None:
            block.append(line)
    return found


def extract(text: str, no_module: bool = False) -> str:
    found = blocks(text)
    example = next((i for i, (info, _) in enumerate(found) if info == "python"), None)
    if example is None:
        return ""
    if not no_module:
        return found[example][1]
    return next((code for info, code in found[example + 1:] if info == ""), "")


def main() -> int:
    no_module = sys.argv[1:2] == ["--no-module"]
    path = sys.argv[2 if no_module else 1]
    with open(path, encoding="utf-8") as f:
        code = extract(f.read(), no_module)
    if not code:
        what = "plain block after the python block" if no_module else "python block"
        print(f"readme_example: no {what} under '## From Python' in {path}", file=sys.stderr)
        return 1
    sys.stdout.write(code)
    return 0


if __name__ == "__main__":
    sys.exit(main())
