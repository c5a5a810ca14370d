"""How notes connect: links/backlinks/mentions/related notes, kb check, the graph, and moving
a note with every link to it (which note a link means is ``kb.names.resolve``).
"""
