"""kb's query language, parsed into a small syntax tree that every search engine compiles.

words are ANDed        Redis 学习笔记
OR, parentheses        (roofline OR 带宽) gpu
-word, NOT word        redis -cluster, redis NOT cluster
"exact phrase"         "arithmetic intensity", "显存带宽"
prefix*                roof*   (at least 2 characters)
field filters          tag:cs336  title:roofline  path:posts/  series:CS336
                       category:GPU  date:2024  date:2024-03  date:2024-01..2024-06
                       draft:true
"""

from __future__ import annotations

import re
from typing import NamedTuple

from kb.errors import UsageError
from kb.values import Value

MAX_QUERY_CHARS = 500
MIN_PREFIX_CHARS = 2
PREFIX_MODE_MIN_CHARS = 3
FIELDS = ("tag", "title", "path", "series", "category", "date", "draft")
_FIELD_ALIASES = {"tags": "tag", "categories": "category"}
# A word may hold a call's parentheses (`Thread.sleep()`, `f(x)`): a `(` after a word
# character that closes before the next space is part of the word, not a group.
_LEXEME = re.compile(
    r'\s*(?:(?P<open>\()|(?P<close>\))|(?P<quote>-?"[^"]*"?)'
    r'|(?P<word>[^\s()"]+(?:\([^\s()"]*\)[^\s()"]*)*(?:"[^"]*"?)?))'
)
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f]")
MAX_DEPTH = 12  # nested groups and NOTs; deeper is a typo, not a query
# Each different term costs the engines a posting-list walk and a score per hit, so a query's
# cost is bounded by capping its terms. A prefix (and a lone Chinese character, which matches
# every bigram it starts) expands over the vocabulary and counts as EXPANDING_COST terms.
MAX_TERMS = 32
EXPANDING_COST = 4
_OR_BOTH_SIDES = 'OR needs a term on both sides: write a OR b, or "OR" to search the word'
_DATE = re.compile(r"^(\d{4})(?:-(\d{1,2}))?(?:-(\d{1,2}))?$")


class QuerySyntaxError(UsageError):
    """The query cannot be parsed; the message says what is wrong, in one line."""


class Word(Value):
    text: str
    prefix: bool = False


class Phrase(Value):
    text: str


class Field(Value):
    name: str  # one of FIELDS
    value: str  # for date: "start..end" as ISO dates, inclusive
    phrase: bool = False


class Not(Value):
    child: Node


class And(Value):
    children: tuple[Node, ...]


class Or(Value):
    children: tuple[Node, ...]


Node = Word | Phrase | Field | Not | And | Or


class Query(Value):
    root: Node
    text: str
    explicit: bool = False  # AND or OR written out: the words mean exactly that

    def positive_terms(self) -> list[Word | Phrase | Field]:
        """Words, phrases and title filters not under a NOT: what ranks and highlights."""
        found: list[Word | Phrase | Field] = []
        _collect_positive(self.root, found)
        return found

    def title_key(self) -> str:
        """The positive words as one lower-case string: a note titled so comes first."""
        words = [t.value if isinstance(t, Field) else t.text for t in self.positive_terms()]
        return " ".join(words).lower()

    def dictionary_pieces(self, limit: int = 24) -> list[str]:
        """Every 2+ character piece of each Chinese run of the positive terms, longest
        first: the dictionary words a term may be, used only to raise the rank."""
        from kb.words.tokenize import segments  # deferred: 3 modules more

        pieces: list[str] = []
        for term in self.positive_terms():
            text = term.value if isinstance(term, Field) else term.text
            for run in segments(text):
                if run.kind != "cjk" or len(run.text) < 2:
                    continue
                for size in range(len(run.text), 1, -1):
                    pieces.extend(run.text[i : i + size] for i in range(len(run.text) - size + 1))
        return list(dict.fromkeys(pieces))[:limit]


def _collect_positive(node: Node, found: list[Word | Phrase | Field]) -> None:
    if isinstance(node, Word | Phrase) or (isinstance(node, Field) and node.name == "title"):
        found.append(node)
    elif isinstance(node, And | Or):
        for child in node.children:
            _collect_positive(child, found)


class _Lexeme(NamedTuple):
    kind: str  # open | close | quote | word | OR | AND | NOT
    text: str


def parse_query(text: str, prefix_last: bool = False) -> Query:
    """Parse ``text``; with ``prefix_last`` an unfinished last word counts as a prefix."""
    if len(text) > MAX_QUERY_CHARS:
        raise QuerySyntaxError(f"query is longer than {MAX_QUERY_CHARS} characters")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise QuerySyntaxError("the query has bytes that are not valid UTF-8") from None
    text = _CONTROLS.sub(" ", text)
    lexemes = _lex(text)
    if not lexemes:
        raise QuerySyntaxError("empty query: give a word, a phrase or a filter such as tag:x")
    explicit = any(lexeme.kind in ("AND", "OR") for lexeme in lexemes)
    parser = _Parser(lexemes)
    root = parser.parse()
    if prefix_last and not text.endswith((" ", ")", '"')):
        root = _prefix_last_word(root)
    root = fold(root)
    if not _has_positive(root):
        raise QuerySyntaxError("the query only excludes: add a word or a filter to search for")
    cost = query_cost(root)
    if cost > MAX_TERMS:
        raise QuerySyntaxError(
            f"the query has too many different terms ({cost}, a prefix* or a lone Chinese "
            f"character counting {EXPANDING_COST}); at most {MAX_TERMS} are allowed"
        )
    return Query(root, text, explicit)


def query_cost(node: Node) -> int:
    """The different terms of a tree, NOTs included, an expanding one counting more."""
    return sum(EXPANDING_COST if _expands(t) else 1 for t in distinct_terms(node))


def fold(node: Node) -> Node:
    """The same query with repeats said once: nested ANDs (ORs) merged into their parent,
    and a child that means what an earlier sibling means dropped (`a a` = `a`)."""
    if isinstance(node, Not):
        return Not(fold(node.child))
    if not isinstance(node, And | Or):
        return node
    children: dict[object, Node] = {}
    for child in (fold(c) for c in node.children):
        flat = (
            child.children
            if isinstance(child, And | Or) and type(child) is type(node)
            else (child,)
        )
        for part in flat:
            children.setdefault(_meaning(part), part)
    kept = tuple(children.values())
    return kept[0] if len(kept) == 1 else type(node)(kept)


def distinct_terms(node: Node) -> set[object]:
    """The different words, phrases and filters of a tree, NOTs included: what it costs."""
    if isinstance(node, Not):
        return distinct_terms(node.child)
    if isinstance(node, And | Or):
        return set().union(*(distinct_terms(c) for c in node.children))
    return {_meaning(node)}


def _expands(meaning: object) -> bool:
    """Whether a term (as ``_meaning`` gives it) is a prefix or holds a lone Chinese
    character: the engines look such a term up as every indexed token it starts."""
    if not isinstance(meaning, tuple) or meaning[0] not in ("word", "phrase"):
        return False
    kind, runs = meaning[0], meaning[1]
    if kind == "phrase":  # only its last character stands for the bigrams it starts
        return bool(runs) and runs[-1][0] == "cjk" and len(runs[-1][1]) == 1
    return meaning[2] or any(run[0] == "cjk" and len(run[1]) == 1 for run in runs)


def _meaning(node: Node) -> object:
    """What a node searches for, equal for two nodes every engine compiles alike: a word
    is its script runs, normalised, with their parts (`GPU` = `gpu`, but `FlashAttention`
    has parts that `flashattention` lacks); a phrase is its runs, normalised."""
    from kb.words.tokenize import latin_parts, normalise, segments  # deferred: 3 modules more

    if isinstance(node, Word):
        runs = tuple(
            (run.kind, normalise(run.text), tuple(normalise(p) for p in latin_parts(run.text)))
            for run in segments(node.text)
        )
        return ("word", runs, node.prefix)
    if isinstance(node, Phrase):
        return ("phrase", tuple((run.kind, normalise(run.text)) for run in segments(node.text)))
    if isinstance(node, Not):
        return ("not", _meaning(node.child))
    if isinstance(node, And | Or):
        return (type(node).__name__, tuple(_meaning(c) for c in node.children))
    return node  # a filter: equal when written alike


def _lex(text: str) -> list[_Lexeme]:
    lexemes: list[_Lexeme] = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        match = _LEXEME.match(text, pos)
        if match is None or match.end() == pos:
            break
        pos = match.end()
        kind = match.lastgroup or "word"
        value = match.group(kind)
        if kind == "quote" and (len(value.lstrip("-")) < 2 or not value.endswith('"')):
            # An unclosed quote is read as text: `5" screen`, or a phrase being typed.
            lexemes.extend(_Lexeme("word", w) for w in value.replace('"', " ").split())
            continue
        if kind == "word" and value in ("OR", "AND", "NOT"):
            kind = value
        lexemes.append(_Lexeme(kind, value))
    return lexemes


class _Parser:
    def __init__(self, lexemes: list[_Lexeme]) -> None:
        self.lexemes = lexemes
        self.pos = 0
        self.depth = 0

    def peek(self) -> _Lexeme | None:
        return self.lexemes[self.pos] if self.pos < len(self.lexemes) else None

    def next_kind(self) -> str | None:
        """The kind of the next lexeme; None at the end."""
        lexeme = self.peek()
        return lexeme.kind if lexeme is not None else None

    def take(self) -> _Lexeme:
        lexeme = self.lexemes[self.pos]
        self.pos += 1
        return lexeme

    def parse(self) -> Node:
        node = self.parse_or()
        if self.peek() is not None:
            raise QuerySyntaxError("unmatched ) in the query: remove it, or open the group with (")
        return node

    def parse_or(self) -> Node:
        children = [self.parse_and()]
        while (lexeme := self.peek()) is not None and lexeme.kind == "OR":
            self.take()
            if self.next_kind() in (None, "OR", "close"):
                raise QuerySyntaxError(_OR_BOTH_SIDES)
            children.append(self.parse_and())
        return children[0] if len(children) == 1 else Or(tuple(children))

    def parse_and(self) -> Node:
        children: list[Node] = []
        while (lexeme := self.peek()) is not None and lexeme.kind not in ("OR", "close"):
            if lexeme.kind == "AND":
                self.take()
                continue
            children.append(self.parse_unary())
        # Words with nothing searchable in them (`。`, `-`) would match nothing: drop them.
        children = [c for c in children if not _empty(c)]
        if not children:
            if self.next_kind() in (None, "close"):
                raise QuerySyntaxError("nothing to search for: give a word, a phrase or a filter")
            raise QuerySyntaxError(_OR_BOTH_SIDES if self.peek() else "empty query or group")
        return children[0] if len(children) == 1 else And(tuple(children))

    def parse_unary(self) -> Node:
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                raise QuerySyntaxError("the query is nested too deeply (NOT, -, parentheses)")
            return self._unary()
        finally:
            self.depth -= 1

    def _unary(self) -> Node:
        lexeme = self.take()
        if lexeme.kind == "word" and lexeme.text == "-" and self.next_kind() in ("open", "quote"):
            return Not(self.parse_unary())  # -(a OR b)
        if lexeme.kind == "NOT":
            if self.next_kind() in (None, "OR", "close"):
                raise QuerySyntaxError(
                    'NOT needs a term after it: write a NOT b, or "NOT" to search the word'
                )
            return Not(self.parse_unary())
        if lexeme.kind == "open":
            node = self.parse_or()
            if self.peek() is None:
                raise QuerySyntaxError(
                    "unclosed ( in the query: close the group with ), or remove the ("
                )
            self.take()
            return node
        if lexeme.kind == "quote":
            negated = lexeme.text.startswith("-")
            phrase = lexeme.text.lstrip("-")[1:-1].strip()
            if not phrase:
                raise QuerySyntaxError('empty "" phrase in the query')
            return Not(Phrase(phrase)) if negated else Phrase(phrase)
        if lexeme.kind in ("AND", "OR"):
            raise QuerySyntaxError(
                f"{lexeme.text} needs a term on both sides: write a {lexeme.text} b, "
                f'or "{lexeme.text}" to search the word'
            )
        return _word(lexeme.text)


def _empty(node: Node) -> bool:
    from kb.words.tokenize import segments  # deferred: 3 modules more

    if isinstance(node, Not):
        return _empty(node.child)
    return isinstance(node, Word | Phrase) and not any(True for _ in segments(node.text))


def _word(text: str) -> Node:
    if text.startswith("-") and len(text) > 1 and text[1] != "-":
        return Not(_word(text[1:]))  # one dash excludes; `--rebuild` is a word
    name, sep, value = text.partition(":")
    field = _FIELD_ALIASES.get(name.lower(), name.lower())
    if sep and field in FIELDS:
        return _field(field, value)
    if text.endswith("*") and _searchable(text):  # a lone operator (`select *`) is dropped
        stem = text.rstrip("*")
        if len(stem) < MIN_PREFIX_CHARS:
            raise QuerySyntaxError(
                f"prefix {text!r} is too short: give at least "
                f"{MIN_PREFIX_CHARS} characters before *"
            )
        return Word(stem, prefix=True)
    return Word(text)


def _searchable(text: str) -> bool:
    from kb.words.tokenize import segments  # deferred: 3 modules more

    return any(True for _ in segments(text))


def _field(name: str, value: str) -> Field:
    phrase = value.startswith('"')
    if phrase:
        if len(value) < 2 or not value.endswith('"'):
            raise QuerySyntaxError('unclosed " in the query')
        value = value[1:-1]
    value = value.strip()
    if not value:
        raise QuerySyntaxError(f"{name}: needs a value, such as {name}:{_EXAMPLES[name]}")
    if name == "date":
        return Field(name, _date_range(value))
    if name == "draft":
        lowered = value.lower()
        if lowered not in ("true", "false", "yes", "no"):
            raise QuerySyntaxError("draft: takes true or false")
        return Field(name, "true" if lowered in ("true", "yes") else "false")
    return Field(name, value, phrase)


_EXAMPLES = {
    "tag": "cs336",
    "title": "roofline",
    "path": "posts/",
    "series": "CS336",
    "category": "GPU",
    "date": "2024-03",
    "draft": "true",
}


def _date_range(value: str) -> str:
    start_text, sep, end_text = value.partition("..")
    start = _date_bound(start_text, first=True) if start_text else "0000-01-01"
    end = (
        _date_bound(end_text if sep else start_text, first=False)
        if (end_text or not sep)
        else "9999-12-31"
    )
    if start > end:
        raise QuerySyntaxError(f"date:{value} ends before it starts")
    return f"{start}..{end}"


def _date_bound(text: str, first: bool) -> str:
    import calendar  # only for date: filters; not worth a millisecond of every start-up

    match = _DATE.match(text)
    if not match:
        raise QuerySyntaxError(
            f"date:{text} is not a date: use 2024, 2024-03, 2024-03-10 or a range 2024-01..2024-06"
        )
    year = int(match.group(1))
    month = int(match.group(2)) if match.group(2) else (1 if first else 12)
    if not 1 <= month <= 12:
        raise QuerySyntaxError(f"date:{text} has no month {month}")
    last_day = calendar.monthrange(year, month)[1]
    day = int(match.group(3)) if match.group(3) else (1 if first else last_day)
    if not 1 <= day <= last_day:
        raise QuerySyntaxError(f"date:{text} has no day {day}")
    return f"{year:04d}-{month:02d}-{day:02d}"


def _has_positive(node: Node) -> bool:
    if isinstance(node, Not):
        return False
    if isinstance(node, And):
        return any(_has_positive(c) for c in node.children)
    if isinstance(node, Or):
        return all(_has_positive(c) for c in node.children)
    return True


def _prefix_last_word(node: Node) -> Node:
    if isinstance(node, Word) and not node.prefix and _is_latin_word(node.text):
        return Word(node.text, prefix=True) if len(node.text) >= PREFIX_MODE_MIN_CHARS else node
    if isinstance(node, And | Or) and node.children:
        last = _prefix_last_word(node.children[-1])
        return type(node)((*node.children[:-1], last))
    return node


def _is_latin_word(text: str) -> bool:
    from kb.words.tokenize import segments  # deferred: 3 modules more

    parts = list(segments(text))
    return bool(parts) and parts[-1].kind == "latin" and parts[-1].end == len(text)
