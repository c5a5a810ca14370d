"""How notes connect: link resolution, links/backlinks/mentions/related notes, kb check, the
graph, and moving a note with every link to it.
"""
