"""A search as the user sees it, above the engines: run (the text read, planned, asked of the
engine and of meaning, hits ordered), snippets, proximity (how near a note holds the words).
"""
