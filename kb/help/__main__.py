"""``python -m kb.help [DOCS]``: copy the pages of docs/ into kb/help/*.md.

Every page must have a topic in ``kb.help.TOPICS`` (its one-line summary) and every topic
a page; a copy in kb/help/ whose page is gone is removed.
"""

from __future__ import annotations

import sys
from pathlib import Path

from kb.help import TOPICS

docs = Path(sys.argv[1] if len(sys.argv) > 1 else "docs")
here = Path(__file__).parent
pages = {path.stem: path for path in sorted(docs.glob("*.md"))}
unlisted = sorted(set(pages) - set(TOPICS))
absent = sorted(set(TOPICS) - set(pages))
if unlisted or absent:
    if unlisted:
        print(f"kb.help: give these pages a summary in TOPICS: {', '.join(unlisted)}")
    if absent:
        print(f"kb.help: these topics have no page in {docs}/: {', '.join(absent)}")
    sys.exit(1)
for stale in sorted(here.glob("*.md")):
    if stale.stem not in pages:
        stale.unlink()
        print(f"removed {stale}")
for topic, source in pages.items():
    target = here / f"{topic}.md"
    target.write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    print(f"wrote {target}")
