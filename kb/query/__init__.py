"""The query language, below the engines: its syntax, how a typed query is read (words,
Chinese runs, typos, glossary partners) and the engine-neutral plan every engine runs.
"""
