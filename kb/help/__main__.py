"""``python -m kb.help [README.md]``: copy the README's sections into kb/help/*.md."""

from __future__ import annotations

import sys
from pathlib import Path

from kb.help import TOPICS, readme_section

readme = Path(sys.argv[1] if len(sys.argv) > 1 else "README.md").read_text(encoding="utf-8")
for topic, heading in TOPICS.items():
    target = Path(__file__).with_name(f"{topic}.md")
    target.write_text(readme_section(readme, heading), encoding="utf-8")
    print(f"wrote {target}")
