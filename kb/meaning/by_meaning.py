"""Search by meaning as the facade offers it, its part ``by_meaning``: the meaning
kb.yaml configures, its status, what the model alone says of every note for a text, and
the notes near a note (what related notes ask of it).

Nothing here loads numpy or a model until a method needs one: ``configured`` and
``status`` never do, so a command that only asks whether meaning is on stays cheap.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kb.config import Config
    from kb.meaning.hybrid import Meaning, MeaningStatus
    from kb.meaning.neighbours import Neighbourhood
    from kb.store import Store


class ByMeaning:
    """Search by meaning for one knowledge base; ``store`` is this thread's reader."""

    def __init__(self, config: Config, store: Callable[[], Store]) -> None:
        self._config = config
        self._store = store

    def configured(self) -> Meaning | None:
        """Search by meaning as kb.yaml's ``semantic:`` sets it (kb/meaning), or None: off,
        or its package not installed. Finding that out imports no numpy."""
        from kb.meaning.hybrid import configured_meaning  # deferred: only search asks

        return configured_meaning(self._config.raw)

    def status(self) -> MeaningStatus:
        """Whether search by meaning is on, with which model, how many notes and passages
        are embedded and how many wait (kb info, kb stats); loads no model."""
        from kb.meaning.hybrid import meaning_status  # deferred: only kb info/stats ask

        if not self._config.store_path.exists():
            return meaning_status(self._config.raw, None)
        return meaning_status(self._config.raw, self._store())

    def scores(self, text: str) -> tuple[float, dict[str, tuple[float, float]]] | None:
        """What the model alone says of every note for ``text``: the corpus's floor and,
        by note path, the cosine of its best passage and of the whole note; None when
        meaning is off or the notes are not embedded by this model. For benchmarks and
        for comparing with a search (the ranking itself is ``search``)."""
        meaning = self.configured()
        store = self._store()
        if meaning is None or not store.vectors.exist():
            return None
        from kb.meaning.hybrid import nearest_notes  # deferred: loads numpy

        found = nearest_notes(meaning, store, text)
        if found is None:
            return None
        floor, evidence = found
        paths = store.notes.paths()
        return floor, {paths[i]: evidence[i] for i in evidence if i in paths}

    def near(self) -> Callable[[int, int, float], Neighbourhood | None] | None:
        """The notes near a note in meaning (``kb.links.related.NearInMeaning``), when
        meaning is on and the store holds this embedder's vectors; else None (related
        notes from the other evidence alone)."""
        meaning = self.configured()
        store = self._store()
        if meaning is None or not store.vectors.exist():
            return None
        from kb.meaning.embedder import EmbedderError  # deferred: loaded by configured()

        try:
            embedder = meaning.embedder()
        except EmbedderError:
            return None
        from kb.meaning.index import vector_index  # deferred: numpy, only with meaning on
        from kb.meaning.neighbours import neighbourhood  # deferred: numpy, as above

        index = vector_index(store, embedder)
        if index is None:  # another model's vectors: kb ingest embeds again
            return None
        return lambda note_id, count, hubness: neighbourhood(index, note_id, count, hubness)
