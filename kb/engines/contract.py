"""Search engines behind one interface; each engine lives in its own module, named in
``kb.engines.registry``. ``kb.query.plan`` holds what they share: the stream layout and
the query plan each of them translates."""

from __future__ import annotations

import math
import re
import shutil
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping
from importlib import import_module
from operator import itemgetter
from typing import TYPE_CHECKING, ClassVar, NamedTuple, Protocol

from kb.errors import KbError, StoreError, os_error_message

if TYPE_CHECKING:
    from pathlib import Path

    from kb.ingest.documents import SearchDocument
    from kb.query.plan import QueryPlan, Text
    from kb.query.syntax import Query
    from kb.store import Store

# A note like another, as an engine finds it: its id, a score 0..1, the words the two share.
# kb.links.related turns these into Related notes with a reason a reader can check.
SimilarNote = tuple[int, float, list[str]]


class EngineHit(NamedTuple):
    note_id: int
    score: float  # higher is better


class SearchEngine(Protocol):
    """What kb's search needs of an engine. Writers are engine-specific."""

    name: str

    def is_ready(self) -> bool:
        """Whether the index exists and reflects the store; search warns when it does not."""
        ...

    def search(self, query: Query | QueryPlan, limit: int) -> list[EngineHit]:
        """Note ids matching ``query`` (or its plan, as ``kb.query.reading`` read it), best
        first."""
        ...

    def search_and_titled(
        self, planned: QueryPlan, titles: Text, limit: int
    ) -> tuple[list[EngineHit], list[EngineHit]]:
        """``search(planned, limit)`` and ``search(planned.kept_to(titles), limit)``: the
        best matches, and the best of those whose title holds the words (an engine may
        answer both from one pass over the matches; ``two_searches`` otherwise)."""
        ...

    def count(self, text: Text, cap: int) -> int:
        """How many notes match a plan node, counted up to ``cap``."""
        ...

    def holders(self, text: Text, among: Collection[int]) -> set[int]:
        """Which of the notes ``among`` match a plan node."""
        ...

    def more_like_this(
        self, note_id: int, document: SearchDocument, limit: int = 30
    ) -> list[SimilarNote]:
        """Notes sharing the document's most distinctive words, best first (see the
        module function ``more_like_this``, which engines call with their lookups)."""
        ...


class IndexWriter(Protocol):
    """How ingest keeps an engine's index in step with the store."""

    def prepare(self) -> bool:
        """Create the index if needed; True when it must be filled from the whole store."""
        ...

    def clear(self) -> None: ...

    def add(self, note_id: int, streams: tuple[str, ...]) -> None: ...

    def delete(self, documents: list[tuple[int, SearchDocument]]) -> None: ...

    def mark_synced(self, generation: int) -> None: ...


class EngineEntry(ABC):
    """One engine as ingest and the facade use it: how to read it, how to write it."""

    name: ClassVar[str]
    # True when the index lives in the store's database and is written in the store's
    # transaction; False when it lives outside and catches up in ``after_commit``.
    in_store: ClassVar[bool]

    @abstractmethod
    def reader(self, index_dir: Path, store: Store) -> SearchEngine:
        """The engine searching through ``store`` (one thread's read connection)."""

    @abstractmethod
    def writer(self, store: Store) -> IndexWriter:
        """What ingest writes to inside the store's transaction."""

    def after_commit(  # noqa: B027 - a no-op unless the index lives outside the store
        self,
        index_dir: Path,
        store: Store,
        streams: Mapping[int, tuple[str, ...]] | None,
        rebuild: bool,
    ) -> None:
        """Bring an index kept outside the store up to date once the store committed;
        ``streams`` are the tokens of the notes this ingest wrote (None when
        ``in_store``). An index in the store committed with it: nothing to do."""


MLT_CANDIDATES = 50  # the note's most frequent words: enough to find the distinctive ones
MLT_TERMS = 25
# Each word kept costs a look-up of the notes that hold it: stop once the words kept are
# held by this many notes in all (at 10,000 notes a word may be in up to 520).
MLT_POSTINGS_BUDGET = 2000
# A word is distinctive only when few notes hold it: at most a fifth of a small collection
# (6 of 31 notes), at most 20 + 5% of a large one (520 of 10,000, 5,020 of 100,000: past
# that its idf is under log 20 and its holders list costs more than it tells), and never
# fewer than 3 notes, so two notes of a tiny folder can still share a rare word.
MLT_MIN_CEILING = 3
MLT_SMALL_SHARE = 0.2
MLT_LARGE_SHARE = 0.05
MLT_LARGE_BASE = 20
# Chinese suffixes rjieba's dictionary glues to the next word (持久|化机制) or leaves alone
# (公众|号): they belong to the word before (see chinese_words).
_SUFFIXES = frozenset("化性式型器率者度量号法池库表")
_NUMBER = re.compile("[零〇一二三四五六七八九十百千万亿两几]*[十百千万亿][个次条种位份本张只件数]")
_LATEX_COMMAND = re.compile(r"\\[A-Za-z]+")
# A written-out address: its scheme (or www.) up to a space, a bracket, a quote or Chinese.
_URL = re.compile(
    r"(?:\b[A-Za-z][A-Za-z0-9+.-]*://|\bwww\.)[^\s<>()\[\]{}\"'\u3000-\u9fff\uff00-\uffef]*"
)
_CHARACTER_RANGES = re.compile(r"(?:[a-z0-9]-[a-z0-9])+")  # a-za-z0-9: a regex's [a-zA-Z0-9]


def two_searches(
    engine: SearchEngine, planned: QueryPlan, titles: Text, limit: int
) -> tuple[list[EngineHit], list[EngineHit]]:
    """``SearchEngine.search_and_titled`` as two searches."""
    return engine.search(planned, limit), engine.search(planned.kept_to(titles), limit)


def frequency_ceiling(total: int) -> int:
    """The most notes a word may be in and still tell two notes apart (see above)."""
    share = min(total * MLT_SMALL_SHARE, MLT_LARGE_BASE + total * MLT_LARGE_SHARE)
    return max(MLT_MIN_CEILING, int(share))


def more_like_this(
    note_id: int,
    counts: Counter[str],
    total: int,
    frequency: Callable[[str, int], int],
    holders: Callable[[str], Iterable[int]],
    limit: int,
) -> list[SimilarNote]:
    """Notes sharing a note's most distinctive words, scored 0..1 (the share of the note's
    word weight, tf-idf, that the other holds), with the words shared, weightiest first.

    ``counts`` are the note's word counts (``document_terms``). The engine supplies
    ``frequency(word, cap)``, how many notes hold a word counted only up to just past
    ``cap`` (a common word's full count is costly, and past the cap it is not distinctive
    anyway), and ``holders(word)``, the notes that hold it, asked only for the dozen words
    kept. Words spell as ``index_tokens`` says."""
    total = max(total, 1)
    cap = frequency_ceiling(total)
    frequencies = {}
    for word, _ in counts.most_common(MLT_CANDIDATES):
        df = frequency(word, cap)
        if 1 < df <= cap:
            frequencies[word] = df
    weights = {w: (1 + math.log(counts[w])) * math.log(total / df) for w, df in frequencies.items()}
    top = sorted(weights, key=lambda w: (-weights[w], w))
    scores: dict[int, float] = {}
    matched: dict[int, list[str]] = {}
    budget = MLT_POSTINGS_BUDGET
    for word in top[:MLT_TERMS]:
        if budget <= 0:
            break
        budget -= frequencies[word]
        for other in holders(word):
            if other != note_id:
                scores[other] = scores.get(other, 0.0) + weights[word]
                matched.setdefault(other, []).append(word)  # in order of weight
    best = sum(weights[w] for w in top[:MLT_TERMS]) or 1.0
    import heapq  # here only: the search path never needs it

    best_first = heapq.nlargest(limit, scores.items(), key=itemgetter(1))  # as Counter does
    return [(other, score / best, matched[other]) for other, score in best_first]


def _is_mlt_term(token: str, cjk: bool) -> bool:
    """Words worth comparing notes by: Latin words of 3+ letters, Chinese dictionary words
    of 2+ characters, neither of them a stop word."""
    from kb.query.stopwords import is_stop_word  # deferred: 2 modules more

    if is_stop_word(token):
        return False
    if cjk:
        return len(token) >= 2 and all("\u3400" <= ch <= "\u9fff" for ch in token)
    return (
        len(token) >= 3
        and token[0].isalpha()
        and token.isascii()
        and not _CHARACTER_RANGES.fullmatch(token)
    )


def chinese_words(run: str) -> list[str]:
    """The words of a run of Chinese characters, whole: rjieba's exact mode (never the
    search mode's overlapping pieces), mended where its dictionary splits a word it does
    not know. A suffix glued to the next word goes back (持久|化机制 -> 持久化, 机制) or,
    left alone, joins the word before (公众|号 -> 公众号, 线程|池 -> 线程池); any other lone
    character that is not a function word drops the words beside it, which are likely
    pieces of a longer word (实现|高|可用); numbers with their measure word go too."""
    import rjieba  # ~110 ms to load: only related notes and indexing need it

    from kb.query.stopwords import is_stop_word  # deferred: 2 modules more

    words: list[str] = []
    for word in rjieba.cut(run):
        rest = word[1:]
        if (
            words
            and len(rest) >= 2
            and word[0] in _SUFFIXES
            and len(words[-1]) >= 2
            and rest in rjieba.cut_for_search(word)
        ):
            words[-1] += word[0]
            words.append(rest)
        elif words and len(word) == 1 and word in _SUFFIXES and len(words[-1]) >= 2:
            words[-1] += word
        else:
            words.append(word)
    pieces: set[int] = set()
    for i, word in enumerate(words):
        if len(word) == 1 and not is_stop_word(word):
            pieces.update((i - 1, i + 1))
    return [
        w
        for i, w in enumerate(words)
        if len(w) > 1 and i not in pieces and not is_stop_word(w) and not _NUMBER.match(w)
    ]


def index_tokens(word: str) -> list[str]:
    """How a word of ``document_terms`` is spelled in the main index stream: a Latin word
    as itself, a Chinese word as its bigrams (a phrase: adjacent tokens)."""
    if len(word) > 1 and all("\u3400" <= ch <= "\u9fff" for ch in word):
        return [word[i : i + 2] for i in range(len(word) - 1)]
    return [word]


def document_terms(document: SearchDocument) -> Counter[str]:
    """Whole-word counts of a document (Latin words and Chinese dictionary words, no stop
    words), title and headings counting more than body text."""
    from kb.query.tokenize import normalise, segments  # deferred: 17 modules more

    counts: Counter[str] = Counter()
    body = _LATEX_COMMAND.sub(" ", document.body)  # \frac, \text: markup, not words
    body = _URL.sub(" ", body)  # https, github, com: pieces of an address, not words
    weighted = ((document.title, 3), (document.meta, 2), (document.headings, 2), (body, 1))
    for text, weight in weighted:
        for segment in segments(text):
            if segment.kind == "latin":
                words = [normalise(segment.text)]
            else:
                words = chinese_words(segment.text)
            for word in words:
                if _is_mlt_term(word, cjk=segment.kind == "cjk"):
                    counts[word] += weight
    return counts


def first_page(
    store: Store, scores: Mapping[int, float], exact: Collection[int], limit: int
) -> list[EngineHit]:
    """The first ``limit`` of the notes a query matched, in FTS5's order: a title equal to
    the query first, then by score, ties newest first (undated last), then by path. Only
    the scored notes are sorted here; the notes a filter keeps with no score (often most
    of them: ``tag:缓存`` keeps 5,000 of 100,000) come from the store in date order, as
    many as the page still needs (the engines whose filters are sets: whoosh, tantivy)."""
    scored = [i for i, score in scores.items() if score or i in exact]
    tied = len({scores[i] for i in scored}) < len(scored)
    dated = store.notes.dates_and_paths(scored) if tied else {}
    scored.sort(
        key=lambda i: (
            i not in exact,
            -scores[i],
            newest_first(dated.get(i, ("", ""))[0]),
            dated.get(i, ("", ""))[1],
        )
    )
    page = scored[:limit]
    if len(page) < limit:
        unscored = {i for i, score in scores.items() if not score and i not in exact}
        page.extend(store.notes.newest(unscored, limit - len(page)))
    return [EngineHit(i, scores[i]) for i in page]


def newest_first(date: str | None) -> tuple[int, list[int]]:
    """A sort key that puts later ISO dates first and undated notes last
    (first_page, for the engines whose filters are sets: whoosh, tantivy)."""
    if not date:
        return (1, [])
    # The 1 after the characters puts a longer date before its own prefix, as SQLite's
    # ``date DESC`` does ('2024-01-09T10:00' before '2024-01-09').
    return (0, [*(-ord(ch) for ch in date), 1])


# -- what the engines with an index folder of their own share (whoosh, tantivy) ----------


def importable(module: str) -> bool:
    """Whether an engine's package is installed (imported: a broken install is not)."""
    try:
        import_module(module)
    except ImportError:
        return False
    return True


def require_package(module: str, engine: str, package: str, extra: str) -> None:
    if not importable(module):
        raise KbError(
            f"the {engine} engine needs {package}: pip install '.[{extra}]' in kb's folder"
        )


def rebuild_beside(path: Path, build: Callable[[Path], int]) -> int:
    """Build an engine's index in a new folder beside ``path`` (``build`` writes it and
    says how many notes it wrote) and swap it in; a failed build leaves nothing, and until
    the swap readers see the old index."""
    fresh = path.with_name(path.name + ".new")
    shutil.rmtree(fresh, ignore_errors=True)
    try:
        fresh.mkdir(parents=True)
        written = build(fresh)
    except BaseException as exc:
        shutil.rmtree(fresh, ignore_errors=True)
        if isinstance(exc, OSError):
            raise StoreError(os_error_message(exc, fresh)) from exc
        raise
    old = path.with_name(path.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if path.exists():
        path.rename(old)
    fresh.rename(path)
    shutil.rmtree(old, ignore_errors=True)
    return written


class IndexDamaged(StoreError):
    """An engine's own index cannot be read: it is derived, so it is rebuilt, never
    repaired. Each engine names itself (``engine``)."""

    engine = "search"

    def __init__(self, path: Path, cause: BaseException | str) -> None:
        if isinstance(cause, BaseException):
            first = str(cause).splitlines()[0] if str(cause) else ""
            cause = f"{type(cause).__name__}: {first}"
        super().__init__(
            f"the {self.engine} index in {path} is damaged ({cause}); "
            "'kb ingest --rebuild' rebuilds it"
        )
