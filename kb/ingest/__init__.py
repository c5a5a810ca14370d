"""From files to the store: the walk, the incremental run, its parse workers, and the search
document of a note.
"""
