"""From files to the store: the walk, the incremental run, its parse workers, the session
that writes the store and the engines under the lock.
"""
