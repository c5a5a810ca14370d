"""Which note does this text name: the one rule every command and the app use.

In order, the first rule that finds anything decides:

1. a file path, relative to the current folder, that lies in a notes root;
2. the note's path relative to its root (``.md`` optional), its title, a name alias or its
   file stem, any case;
3. a fuzzy match (``redis studdy``) by rapidfuzz over titles, aliases and stems;
4. pinyin of a Chinese title, full or initials (``xiancun``, ``xcgs`` → 显存估算).

Several notes found by one rule is an error that lists them (exit 2), never a guess; none
is an error that names the notes that come close. Exact names are looked up through the
store's indexes, so naming a note by path or title never loads every name; the fuzzy and
pinyin rules do, and pypinyin (about 200 ms to import) is loaded only when they run.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kb.errors import KbError, UsageError
from kb.names.resolve import NoteName, fold
from kb.text import clean_line

if TYPE_CHECKING:
    from kb.store import Store

FUZZY_MATCH = 86  # rapidfuzz WRatio score from which a name counts as meant
FUZZY_CLOSE = 55  # ... and from which a note is offered as close when nothing matched
_LISTED = 10  # notes named in one message
CLOSE_WORD = 75  # rapidfuzz ratio from which a typed word is a name's word mistyped
_LATIN = re.compile(r"[0-9a-z]+")
_HAN_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]+")


@dataclass(slots=True)
class NoteRef:
    id: int
    path: str
    title: str


def note_ref(store: Store, note_id: int) -> NoteRef:
    """The note with this id; KbError when an ingest has removed it meanwhile."""
    row = store.notes.by_id(note_id)
    if row is None:
        raise KbError(f"note {note_id} is no longer in the store")
    return NoteRef(note_id, row.path, clean_line(row.title))


def find_note(store: Store, ref: str, roots: dict[str, Path], cwd: Path, prefixed: bool) -> NoteRef:
    """The one note ``ref`` names, by the rules above.

    Raises UsageError when nothing matches or when several notes do (listing them)."""
    note_id = _by_file(store, ref, roots, cwd, prefixed)
    if note_id is None:
        note_id = _by_index(store, ref, prefixed)
    if note_id is None:
        note_id = _by_every_name(store.notes.names(), ref, prefixed)
    return note_ref(store, note_id)


def _by_file(
    store: Store, ref: str, roots: dict[str, Path], cwd: Path, prefixed: bool
) -> int | None:
    """A file in a notes root, named from the current folder: one index lookup."""
    try:
        candidate = (cwd / ref).resolve()
    except (RuntimeError, OSError):  # a symlink loop (before Python 3.13): it names no file
        return None
    for root_name, root_path in roots.items():
        if root_path in candidate.parents and candidate.is_file():
            rel = candidate.relative_to(root_path).as_posix()
            path = f"{root_name}/{rel}" if prefixed else rel
            return store.notes.ids_of([path]).get(path)
    return None


def _by_index(store: Store, ref: str, prefixed: bool) -> int | None:
    """The note path, title or alias exactly as typed (titles and aliases in any ASCII
    case), through the store's indexes."""
    wanted = ref.strip().strip("/")
    if not wanted:
        return None
    found = store.notes.ids_of([wanted, f"{wanted}.md"])
    for ids in (
        set(found.values()),
        store.notes.ids_titled(wanted),
        store.notes.ids_aliased(wanted),
    ):
        if len(ids) == 1:
            return next(iter(ids))
        if len(ids) > 1:
            raise _several(ref, store.notes.names(ids), prefixed)
    return None


def _by_every_name(names: list[NoteName], ref: str, prefixed: bool) -> int:
    """The rules that compare with every note's names: folded names, fuzzy, pinyin."""
    wanted = fold(ref.strip().strip("/"))
    for matches in (
        [n for n in names if fold(_note_path(n, prefixed)) in (wanted, f"{wanted}.md")],
        [n for n in names if fold(n.title) == wanted],
        [n for n in names if wanted in (fold(a) for a in n.aliases)],
        [n for n in names if fold(n.stem) == wanted],
    ):
        if matches:
            return _one(matches, ref, prefixed)
    scores = fuzzy_scores(names, ref)
    fuzzy = [n for n in names if scores.get(n.id, 0) >= FUZZY_MATCH]
    if fuzzy:
        return _one(fuzzy, ref, prefixed)
    by_pinyin = pinyin_matches(names, ref)
    if by_pinyin:
        return _one(by_pinyin, ref, prefixed)
    close = sorted(
        (n for n in names if scores.get(n.id, 0) >= FUZZY_CLOSE and shares_a_word(ref, n)),
        key=lambda n: (-scores[n.id], n.rel),
    )[:3]
    hint = (
        "; close: " + "; ".join(_described(n, prefixed) for n in close)
        if close
        else ": give its path, title or alias"
    )
    raise UsageError(f"no note matches {clean_line(ref)!r}{hint}")


def fuzzy_scores(names: Iterable[NoteName], ref: str) -> dict[int, float]:
    """Each note's best rapidfuzz score (0-100) over its title, aliases and file stem."""
    from rapidfuzz import fuzz, process, utils  # deferred: loads rapidfuzz

    choices: list[str] = []
    owners: list[int] = []
    for note in names:
        for name in (note.title, note.stem, *note.aliases):
            choices.append(name)
            owners.append(note.id)
    best: dict[int, float] = {}
    for _, score, index in process.extract(
        ref,
        choices,
        scorer=fuzz.WRatio,
        processor=utils.default_process,
        score_cutoff=FUZZY_CLOSE,
        limit=None,
    ):
        note_id = owners[index]
        best[note_id] = max(best.get(note_id, 0.0), score)
    return best


def shares_a_word(ref: str, note: NoteName) -> bool:
    """Whether a note may be offered as close to ``ref``: a word of what was typed is in
    one of its names (``dis`` in ``redis``), or is that name's word mistyped (``redsi``,
    ``lectrue``: rapidfuzz's ratio of the two words at least ``CLOSE_WORD``); two Chinese
    characters in a row that a name holds (``显存估`` and ``显存怎么算``). WRatio alone
    scores ``redsi`` against ``reading-list`` and ``abc`` against ``CS336 Lecture 2`` as
    close: letters in common, scattered, are not something shared."""
    from rapidfuzz.fuzz import ratio  # deferred: loads rapidfuzz

    typed = fold(ref)
    names = [fold(name) for name in (note.title, note.stem, *note.aliases)]
    tokens = {token for name in names for token in _LATIN.findall(name)}
    for word in _LATIN.findall(typed):
        if len(word) < 2:
            continue
        for token in tokens:
            if (len(word) >= 3 and word in token) or ratio(word, token) >= CLOSE_WORD:
                return True
    for run in _HAN_RUN.findall(typed):
        pairs = [run[i : i + 2] for i in range(len(run) - 1)] or [run]
        if any(pair in name for pair in pairs for name in names):
            return True
    return False


def pinyin_matches(names: Iterable[NoteName], ref: str) -> list[NoteName]:
    """Notes whose title's pinyin starts with ``ref``, written in full (``xiancun``) or as
    initials (``xcgs``); only for a Latin ``ref`` of 2 or more letters."""
    wanted = pinyin_query(ref)
    if not wanted:
        return []
    found = []
    for note in names:
        if not _has_han(note.title):
            continue
        full, initials = title_pinyin(note.title)
        if full.startswith(wanted) or initials.startswith(wanted):
            found.append(note)
    return found


def pinyin_query(ref: str) -> str:
    """``ref`` as pinyin is compared (``Miao Sha`` → ``miaosha``), or "" when it cannot be
    pinyin: not Latin letters and digits, or shorter than 2."""
    wanted = "".join(ref.lower().split())
    return wanted if len(wanted) >= 2 and _LATIN.fullmatch(wanted) else ""


# Chinese titles the palette reads by phrase, as ``title_pinyin`` does (150-300 µs each);
# past this many each character is read alone (2 µs), else 100,000 titles take 15-30 s.
PHRASE_PINYIN_TITLES = 2000


def pinyin_keys(titles: Sequence[str]) -> list[tuple[str, str]]:
    """Each title's pinyin, in full and as initials (``title_pinyin``), ("", "") for a title
    without Chinese: what the app's palette compares a Latin query with, computed once.
    Past PHRASE_PINYIN_TITLES Chinese titles a character that has several readings gets
    its commonest one (``kb show`` reads it by phrase: 重庆 chongqing)."""
    chinese = [index for index, title in enumerate(titles) if _has_han(title)]
    read = title_pinyin if len(chinese) <= PHRASE_PINYIN_TITLES else _reader_by_character()
    keys = [("", "")] * len(titles)
    for index in chinese:
        keys[index] = read(titles[index])
    return keys


def _reader_by_character() -> Callable[[str], tuple[str, str]]:
    from pypinyin import lazy_pinyin  # deferred: loads pypinyin

    syllables: dict[str, str] = {}

    def read(title: str) -> tuple[str, str]:
        words: list[str] = []
        for piece in _HAN_OR_NOT.findall(title):
            if _has_han(piece):
                if piece not in syllables:
                    syllables[piece] = "".join(lazy_pinyin(piece)).lower()
                words.append(syllables[piece])
            else:
                words.extend(_LATIN.findall(piece.lower()))
        words = [word for word in words if word]
        return "".join(words), "".join(word[0] for word in words)

    return read


_HAN_OR_NOT = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]|[^\u3400-\u4dbf\u4e00-\u9fff]+")


def title_pinyin(title: str) -> tuple[str, str]:
    """A title in pinyin, in full and as initials, with its Latin words kept:
    ``Redis 学习笔记`` → (``redisxuexibiji``, ``rxxbj``)."""
    from pypinyin import lazy_pinyin  # deferred: loads pypinyin

    # Han characters come back one syllable each; other text goes through ``errors``,
    # which here turns it into its Latin words, each marked by a NUL.
    items = lazy_pinyin(title, errors=_marked_words)
    words: list[str] = []
    for item in items:
        if item.startswith("\0"):
            words.extend(word for word in item.split("\0") if word)
        elif item:
            words.append(item.lower())
    return "".join(words), "".join(word[0] for word in words)


def _marked_words(chunk: str) -> str:
    return "".join(f"\0{word}" for word in _LATIN.findall(chunk.lower()))


def _has_han(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" or "\u3400" <= ch <= "\u4dbf" for ch in text)


def _one(matches: list[NoteName], ref: str, prefixed: bool) -> int:
    unique = {n.id: n for n in matches}
    if len(unique) > 1:
        raise _several(ref, unique.values(), prefixed)
    return next(iter(unique))


def _several(ref: str, notes: Iterable[NoteName], prefixed: bool) -> UsageError:
    found = sorted(notes, key=lambda n: (n.root, n.rel))
    listing = "; ".join(_described(n, prefixed) for n in found[:_LISTED])
    more = f"; and {len(found) - _LISTED} more" if len(found) > _LISTED else ""
    return UsageError(
        f"{clean_line(ref)!r} names {len(found)} notes: {listing}{more}; "
        "give its path to choose one"
    )


def _described(note: NoteName, prefixed: bool) -> str:
    return f"{clean_line(_note_path(note, prefixed))} ({clean_line(note.title)})"


def _note_path(note: NoteName, prefixed: bool) -> str:
    return f"{note.root}/{note.rel}" if prefixed else note.rel
