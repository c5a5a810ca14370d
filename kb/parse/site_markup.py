"""Site markup as a reader of the published page sees it: Jekyll's Liquid and Hugo's
shortcodes turned into what the generator would show, for the app's reader and preview.

The rules (docs/app.md says them to users):

- A Liquid tag (``{% include toc %}``, ``{% if %}``, ``{% assign %}``…) shows nothing, nor
  does a Liquid object of the site (``{{ site.title }}``, ``{{ page.url }}``).
- ``{% raw %}…{% endraw %}`` shows what it holds, exactly, and the tags go (in code too:
  Jekyll reads them before the Markdown).
- ``{% highlight lang %}…{% endhighlight %}`` is a code block.
- A link or image whose URL is built with ``{{ site.url }}{{ site.baseurl }}`` or
  ``{{ "x" | relative_url }}`` has the URL the site serves (``/assets/x.png``): an image is
  then the image placeholder like any other. ``{% link path %}`` and ``{% post_url name %}``
  are links kb follows (``kb:link/…``, ``kb:post/…``).
- A Hugo shortcode's tags show nothing; what a pair holds stays, as Markdown
  (``{{% notice %}}**x**{{% /notice %}}`` shows a bold x). An opening tag alone on its line
  that carries a title (``title="…"``, or an argument in quotes, with a space or not in
  ASCII: ``{{% admonition note "参考代码" %}}``, ``{{% fold 证明 %}}``) shows it as a bold
  line. ``{{< figure src="x.png" caption="…" >}}`` is an image. An escaped shortcode
  (``{{</* figure */>}}``) shows as written without the comment marks, as Hugo does.
- A kramdown attribute list (``{: .notice}``) shows nothing.

Each line stays one line (a line that held only markup becomes empty), so the reader's
line numbers still match the file's. Code is left as written, but for raw tags.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Iterator
from urllib.parse import quote

KB_SCHEME = "kb:"
# Liquid variables a Jekyll site's pages print: the site's, the page's, a loop's.
_LIQUID_OBJECTS = r"(?:site|page|post|layout|include|paginator|jekyll|content|forloop)\b"
_SITE_PREFIX = r"(?:\{\{\s*site\.(?:url|baseurl)\s*\}\}\s*)"
# ](  {{ site.url }}{{ site.baseurl }}/path  ) and ]({{ "/path" | relative_url }})
_SITE_URL = re.compile(
    r"\]\(\s*(?:" + _SITE_PREFIX + r"+([^()\s]*)"
    r"|\{\{\s*[\"']([^\"'{}]*)[\"']\s*\|\s*(?:relative_url|absolute_url)\s*\}\})"
    r"(\s+\"[^\"\n]*\")?\s*\)"
)
# ]( {{ site.baseurl }}{% link _posts/a.md %} ) and ]({% post_url 2017-09-13-name %})
_LIQUID_LINK = re.compile(
    r"\]\(\s*" + _SITE_PREFIX + r"*\{%-?\s*(link|post_url)\s+([^%\s]+)\s*-?%\}\s*\)"
)
_RAW = re.compile(r"\{%-?\s*(raw|endraw)\s*-?%\}")
_HIGHLIGHT = re.compile(r"^\s*\{%-?\s*(highlight|endhighlight)\b\s*([\w+#.-]*)[^%]*-?%\}\s*$")
_TAG = re.compile(r"\{%[^\n]{0,500}?%\}")
_OBJECT = re.compile(r"\{\{-?\s*" + _LIQUID_OBJECTS + r"[^{}\n]{0,300}?\}\}")
_ESCAPED_SHORTCODE = re.compile(r"\{\{([<%])/\*\s?([^\n]{0,500}?)\s?\*/([>%])\}\}")
_SHORTCODE = re.compile(r"\{\{([<%])-?\s*(/?)\s*([\w./-]+)([^\n]{0,500}?)\s*/?-?([>%])\}\}")
_ATTRIBUTES = re.compile(r"\{:[^{}\n]{0,200}\}")
_CODE_SPAN = re.compile(r"(`+[^`]*`+)")
_MAY_HOLD_MARKUP = re.compile(r"\{[{%:]")
_NAMED = re.compile(r"(\w+)\s*=\s*(?:\"([^\"]*)\"|'([^']*)'|(\S+))")


class SiteMarkup:
    """Lines of one note as a reader sees them (the rules above); it remembers, from one
    line to the next, whether a ``{% raw %}`` or ``{% highlight %}`` is open."""

    def __init__(self) -> None:
        self.raw = False
        self.highlight = False

    def lines(self, lines: Iterable[tuple[str, bool]]) -> Iterator[str]:
        """Each (line, is code) as shown."""
        for line, is_code in lines:
            if is_code or self.highlight:
                yield self.code_line(line)
            else:
                yield self.text_line(line)

    def code_line(self, line: str) -> str:
        if self.highlight:
            match = _HIGHLIGHT.match(line)
            if match and match.group(1) == "endhighlight":
                self.highlight = False
                return "```"
            return line
        if "{%" not in line:
            return line
        return "".join(piece for piece, _ in self._raw_pieces(line))

    def text_line(self, line: str) -> str:
        if not self.raw and not _MAY_HOLD_MARKUP.search(line):
            return line  # most lines (and formulas, full of braces) at the cost of one scan
        if not self.raw:
            match = _HIGHLIGHT.match(line)
            if match and match.group(1) == "highlight":
                self.highlight = True
                return f"```{match.group(2)}"
        out = []
        for piece, literal in self._raw_pieces(line):
            out.append(piece if literal else _shown(piece))
        shown = "".join(out)
        return "" if not shown.strip() and line.strip() else shown

    def _raw_pieces(self, line: str) -> Iterator[tuple[str, bool]]:
        """The line cut at its raw tags, each piece with whether it is inside a raw block
        (then shown exactly); the tags themselves are dropped."""
        pos = 0
        for match in _RAW.finditer(line):
            if match.start() > pos:
                yield line[pos : match.start()], self.raw
            self.raw = match.group(1) == "raw"
            pos = match.end()
        if pos < len(line):
            yield line[pos:], self.raw


def _shown(text: str) -> str:
    """A piece of a text line outside raw blocks: its site markup as the site shows it,
    inline code spans left as written."""
    parts = _CODE_SPAN.split(text)
    for index in range(0, len(parts), 2):
        parts[index] = _markup_shown(parts[index])
    return "".join(parts)


def _markup_shown(text: str) -> str:
    if "{" not in text:
        return text
    # An escaped shortcode is text: shown as Hugo shows it, and not read again.
    pieces = _ESCAPED_SHORTCODE.split(text)
    out = []
    for index in range(0, len(pieces), 4):
        out.append(_markup_removed(pieces[index]))
        if index + 3 < len(pieces):
            opening, inner, closing = pieces[index + 1 : index + 4]
            out.append(f"{{{{{opening} {inner.strip()} {closing}}}}}")
    return "".join(out)


def _markup_removed(text: str) -> str:
    if "{" not in text:
        return text
    text = _LIQUID_LINK.sub(_liquid_link, text)
    text = _SITE_URL.sub(_site_url, text)
    alone = _alone(text)
    text = _SHORTCODE.sub(lambda m: _shortcode(m, alone), text)
    text = _TAG.sub("", text)
    text = _OBJECT.sub("", text)
    return _ATTRIBUTES.sub("", text)


def _alone(text: str) -> bool:
    """The line is one shortcode and nothing else."""
    match = _SHORTCODE.fullmatch(text.strip())
    return match is not None


def _liquid_link(match: re.Match[str]) -> str:
    kind = "link" if match.group(1) == "link" else "post"
    return f"]({KB_SCHEME}{kind}/{quote(match.group(2))})"


def _site_url(match: re.Match[str]) -> str:
    path = match.group(1) if match.group(1) is not None else match.group(2)
    path = path or "/"
    if not path.startswith(("/", "#")) and "://" not in path:
        path = "/" + path
    return f"]({path}{match.group(3) or ''})"


def _shortcode(match: re.Match[str], alone: bool) -> str:
    closing, name, args = match.group(2), match.group(3).lower(), match.group(4)
    if closing:
        return ""
    named, positional = _arguments(args)
    if name == "figure" and named.get("src"):
        alt = named.get("caption") or named.get("title") or named.get("alt") or ""
        return f"![{_label(alt)}]({named['src'].replace(' ', '%20')})"
    if not alone:
        return ""
    title = named.get("title") or next(
        (a for a in positional if " " in a.strip() or not a.isascii()), ""
    )
    return f"**{_label(title)}**" if title.strip() else ""


def _arguments(args: str) -> tuple[dict[str, str], list[str]]:
    """A shortcode's named arguments (``src="x"``) and positional ones (``note "参考代码"``)."""
    named = {
        m.group(1).lower(): next(g for g in m.groups()[1:] if g is not None)
        for m in _NAMED.finditer(args)
    }
    rest = _NAMED.sub(" ", args)
    try:
        positional = shlex.split(rest)
    except ValueError:  # an unclosed quote: the words as they are
        positional = rest.split()
    return named, positional


def _label(text: str) -> str:
    return " ".join(text.replace("[", "(").replace("]", ")").replace("*", "").split())
