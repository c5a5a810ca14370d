"""Every note's names, indexed once per store change, for completion as one types.

``rank`` answers as ``kb.notes.editor.rank_notes`` does (the naming rule: folded names
that start with the typed text, then names containing it, then pinyin of a Chinese title,
then, only when none of these found a note, fuzzy matches), without looking at every
name on every keystroke:

- names that start with the text, then names that contain it: ``str.find`` over one
  string of every key (each after a separator, so a key that starts with the text is
  the separator and the text), laid out in the order results are ranked in, so the
  scan stops once enough are found;
- pinyin: the sorted pinyin (full and initials) of Chinese titles, by prefix range;
- fuzzy: rapidfuzz over the names that share a pair of characters with the text (no
  other can score 75), each distinct name scored once.
"""

from __future__ import annotations

import bisect
import re
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from kb.notes.editor import FUZZY_OFFERED, NameKeys, RankedNote, fold_width, name_keys

if TYPE_CHECKING:
    from kb.names.resolve import NoteName

PinyinOf = Callable[["NoteName"], tuple[str, str]]
_SEPARATOR = "\0"
_PAST = "\U0010ffff"  # sorts after every character: the end of a prefix range


class NameIndex:
    """The names of every note (``entries``, in the store's order), indexed."""

    def __init__(self, entries: list[NameKeys], processed: dict[str, str] | None = None) -> None:
        self.entries = entries
        self.processed = {} if processed is None else processed  # names as rapidfuzz reads them
        by_rank = sorted(range(len(entries)), key=lambda i: _name_order(entries[i].note))
        self._rank_of = [0] * len(entries)
        for rank, i in enumerate(by_rank):
            self._rank_of[i] = rank
        self._by_rank = by_rank
        self._by_rel: list[int] | None = None
        parts: list[str] = []
        self._starts: list[int] = []  # where each key begins in _text
        self._owner: list[int] = []  # the entry each key belongs to
        at = 1
        for i in by_rank:
            for key in entries[i].keys:
                self._starts.append(at)
                self._owner.append(i)
                parts.append(key)
                at += len(key) + 1
        self._text = _SEPARATOR + _SEPARATOR.join(parts) + _SEPARATOR
        self._pinyin: tuple[list[tuple[str, int]], list[tuple[str, int]]] | None = None
        self._build_lock = threading.Lock()  # one thread builds, another waits for it
        self._fuzzy: _FuzzyIndex | None = None

    @property
    def has_pinyin(self) -> bool:
        return self._pinyin is not None

    def build_pinyin(self, pinyin_of: PinyinOf) -> None:
        """Index the pinyin of every Chinese title (once: a thread asking meanwhile
        waits for the one spelling them)."""
        with self._build_lock:
            if self._pinyin is not None:
                return
            full: list[tuple[str, int]] = []
            initials: list[tuple[str, int]] = []
            for i, entry in enumerate(self.entries):
                if entry.han:
                    spelled, first = pinyin_of(entry.note)
                    full.append((spelled, i))
                    initials.append((first, i))
            self._pinyin = (sorted(full), sorted(initials))

    def build_fuzzy(self) -> None:
        with self._build_lock:
            if self._fuzzy is None:
                self._fuzzy = _FuzzyIndex(self.entries, self.processed)

    def rank(self, typed: str, pinyin_of: PinyinOf, limit: int = 50) -> list[RankedNote]:
        """As ``kb.notes.editor.rank_notes``."""
        wanted = fold_width(typed.strip())
        entries = self.entries
        if not wanted:
            if self._by_rel is None:
                self._by_rel = sorted(range(len(entries)), key=lambda i: entries[i].note.rel)
            return [RankedNote(entries[i].note, "name") for i in self._by_rel[:limit]]
        ordered = self._containing(_SEPARATOR + wanted, set(), limit)  # keys starting so
        found = set(ordered)
        if len(ordered) < limit:
            ordered += self._containing(wanted, found, limit - len(ordered))
            found.update(ordered)
        ranked = [RankedNote(entries[i].note, "name") for i in ordered]
        latin = "".join(wanted.split())
        if len(ranked) < limit and len(latin) >= 2 and latin.isascii() and latin.isalnum():
            self.build_pinyin(pinyin_of)
            assert self._pinyin is not None
            spelled = self._prefixed(self._pinyin[0], latin) | self._prefixed(
                self._pinyin[1], latin
            )
            ranked += [RankedNote(entries[i].note, "pinyin") for i in sorted(spelled - found)]
            found |= spelled
        if not ranked and len(wanted) >= 3:
            self.build_fuzzy()
            assert self._fuzzy is not None
            ranked = [RankedNote(entries[i].note, "fuzzy") for i in self._fuzzy.close(typed)]
        return ranked[:limit]

    def _prefixed(self, spelled: list[tuple[str, int]], wanted: str) -> set[int]:
        low = bisect.bisect_left(spelled, (wanted,))
        high = bisect.bisect_left(spelled, (wanted + _PAST,))
        return {i for _, i in spelled[low:high]}

    def _containing(self, wanted: str, skip: set[int], enough: int) -> list[int]:
        """Entries (not in ``skip``) with a key containing ``wanted`` (with the separator
        before it: a key starting with it), the first ``enough`` in rank order."""
        text, starts, owner = self._text, self._starts, self._owner
        found: list[int] = []
        seen = set(skip)
        lead = 1 if wanted.startswith(_SEPARATOR) else 0  # the key begins after it
        at = text.find(wanted, 1 - lead)
        while at != -1 and len(found) < enough:
            key = bisect.bisect_right(starts, at + lead) - 1
            entry = owner[key]
            if entry not in seen:
                seen.add(entry)
                found.append(entry)
            # on to the next note: the rest of this one's keys cannot add it again
            nxt = key + 1
            while nxt < len(owner) and owner[nxt] == entry:
                nxt += 1
            if nxt >= len(starts):
                break
            at = text.find(wanted, starts[nxt] - lead)
        return found


class _FuzzyIndex:
    """Each distinct name (title, stem, alias) as rapidfuzz processes it, and the names
    that hold each pair of characters."""

    def __init__(self, entries: list[NameKeys], processed: dict[str, str]) -> None:
        from array import array  # deferred: on first use

        # only when a typo needs it; fuzz and process too, which close() asks for next
        from rapidfuzz import fuzz, process, utils  # noqa: F401

        owners: dict[str, list[int]] = {}
        for i, entry in enumerate(entries):
            note = entry.note
            for name in (note.title, note.stem, *note.aliases):
                done = processed.get(name)
                if done is None:
                    done = processed[name] = utils.default_process(name)
                owners.setdefault(done, []).append(i)
        self.choices = list(owners)
        self.owners = [owners[c] for c in self.choices]
        self.short = [n for n, choice in enumerate(self.choices) if len(choice) < 2]
        pairs: dict[str, array[int]] = {}
        for number, choice in enumerate(self.choices):
            for pair in {choice[k : k + 2] for k in range(len(choice) - 1)}:
                held = pairs.get(pair)
                if held is None:
                    held = pairs[pair] = array("I")
                held.append(number)
        self.pairs = pairs

    def close(self, typed: str) -> list[int]:
        """Entries with a name scoring FUZZY_OFFERED or more (rapidfuzz WRatio), best
        first."""
        from rapidfuzz import fuzz, process, utils  # deferred: loads rapidfuzz

        query = utils.default_process(typed)
        # A name that shares no pair of characters with the text cannot score 75: that
        # takes 3/4 of the shorter one's characters in order, and at least one pair of
        # them is then adjacent in both (a name of one character has no pairs: always
        # scored, rapidfuzz finds it inside a longer text).
        found = set(self.short)
        for pair in {query[k : k + 2] for k in range(len(query) - 1)}:
            found.update(self.pairs.get(pair, ()))
        candidates = sorted(found)
        best: dict[int, float] = {}
        for _, score, at in process.extract(
            query,
            [self.choices[n] for n in candidates],
            scorer=fuzz.WRatio,
            processor=None,
            score_cutoff=FUZZY_OFFERED,
            limit=None,
        ):
            for entry in self.owners[candidates[at]]:
                best[entry] = max(best.get(entry, 0.0), score)
        return sorted(best, key=lambda entry: (-best[entry], entry))


def _name_order(note: NoteName) -> tuple[int, str]:
    return (len(note.title), note.rel)


def index_names(
    names: Iterable[NoteName],
    folded: dict[NoteName, NameKeys] | None = None,
    processed: dict[str, str] | None = None,
) -> NameIndex:
    """An index of ``names``; ``folded`` and ``processed`` keep each name's folded keys
    and rapidfuzz's reading between builds (a save reads again only what it changed)."""

    names = list(names)
    kept = folded if folded is not None else {}
    entries: list[NameKeys | None] = []
    fresh: list[NoteName] = []
    for note in names:
        entry = kept.get(note)
        if entry is None:
            fresh.append(note)
        entries.append(entry)
    made = dict(zip(fresh, name_keys(fresh), strict=True))
    kept.update(made)
    chosen = [made[n] if e is None else e for e, n in zip(entries, names, strict=True)]
    return NameIndex(chosen, processed)


_LATIN_WORD = re.compile(r"[a-z0-9]+")  # as kb.notes.naming reads the Latin words of a title


class PinyinSpeller:
    """``kb.notes.naming.title_pinyin``, sooner. pypinyin spells each run of Chinese
    characters on its own (the Latin text between runs only gives its words), at 30 µs
    a character; titles repeat their runs (学习笔记, 的一些思考), so each run is spelled
    once, and a run whose characters have one spelling each (tones aside) is put
    together from them without pypinyin's phrases."""

    def __init__(self) -> None:
        self._chars: dict[str, str | None] = {}
        self._runs: dict[str, list[str]] = {}

    def __call__(self, title: str) -> tuple[str, str]:
        words: list[str] = []
        latin: list[str] = []
        han: list[str] = []
        for ch in title:
            if self._spelling(ch) is _NOT_HAN:
                if han:
                    words += self._run("".join(han))
                    han.clear()
                latin.append(ch)
            else:
                if latin:
                    words += _LATIN_WORD.findall("".join(latin).lower())
                    latin.clear()
                han.append(ch)
        if han:
            words += self._run("".join(han))
        if latin:
            words += _LATIN_WORD.findall("".join(latin).lower())
        return "".join(words), "".join(word[0] for word in words)

    def _run(self, run: str) -> list[str]:
        found = self._runs.get(run)
        if found is None:
            spelled = [self._chars[ch] for ch in run]
            if any(s is None for s in spelled):
                from pypinyin import lazy_pinyin  # a run with a character of several spellings

                spelled = [item.lower() for item in lazy_pinyin(run) if item]
            found = self._runs[run] = [s for s in spelled if s]
        return found

    def _spelling(self, ch: str) -> str | None:
        found = self._chars.get(ch, _UNSEEN)
        if found is _UNSEEN:
            found = self._chars[ch] = _spell(ch)
        return found


_UNSEEN = "\0unseen"
_NOT_HAN = "\0latin"


def _spell(ch: str) -> str | None:
    """One character's spelling: _NOT_HAN for a character pypinyin does not spell as
    Chinese, None for one with several spellings."""
    from pypinyin import Style, pinyin  # only when a Chinese title is spelled
    from pypinyin.constants import RE_HANS  # deferred: loads pypinyin

    if not RE_HANS.match(ch):
        return _NOT_HAN
    spellings = {s.lower() for s in pinyin(ch, style=Style.NORMAL, heteronym=True)[0]}
    return spellings.pop() if len(spellings) == 1 else None
