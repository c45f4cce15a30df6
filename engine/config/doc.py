"""Render docs/CONFIG.md from the field comments of engine/config/fields.py: `python -m engine.config.doc`."""

from __future__ import annotations

import re
from pathlib import Path

GROUPS = {"DataConfig": "data", "ModelConfig": "model", "OptimConfig": "optim", "TrainConfig": "train",
          "ProbeConfig": "probe"}  # fmt: skip
HEADER = """# Config keys

Every key can be set in a TOML file (one `[group]` table per group), with `--set group.key=value`, or
in a preset. Values are type-checked and validated; a bad key or value is a one-line error with exit
code 2. `--seed`, `--steps` and `--device` are shorthands for `train.seed`, `train.max_steps` and
`train.device`. This file is generated: `python -m engine.config.doc > docs/CONFIG.md`.
"""
FIELD = re.compile(r"    (\w+): ([^=]+?) = (.+?)(?:\s+#\s*(.*))?$")


def markdown() -> str:
    src = (Path(__file__).parent / "fields.py").read_text().splitlines()
    out = [HEADER]
    group = None
    for line in src:
        m = re.match(r"class (\w+)\b", line)
        if m:
            group = GROUPS.get(m.group(1))
            if group:
                out += [f"\n## `{group}`\n", "| key | default | meaning |", "|---|---|---|"]
            continue
        if group and (m := FIELD.match(line)):
            name, _, default, comment = m.groups()
            note = (comment or "").replace("|", "\\|")
            default = {"True": "true", "False": "false"}.get(default.strip(), default)
            out.append(f"| `{group}.{name}` | `{default.strip()}` | {note} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    print(markdown(), end="")
