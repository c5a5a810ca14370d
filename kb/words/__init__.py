"""kb's words, below the store and every engine: the tokenizer, the stop words, and the
search document of a note (the fields every engine indexes).
"""
