"""What the faces show and do with one note: naming it, listing, the app's views, writing a new
note, completion, formulas.
"""
