"""Reading a search: the query language, how a typed query is read (words, Chinese runs, typos,
glossary partners), the engine-neutral plan, kb's tokenizer, and the results with snippets.
"""
