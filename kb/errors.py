"""Domain errors, each carrying the exit code the CLI turns it into."""


class KbError(Exception):
    """Something kb cannot do; the message is one line meant for the user."""

    exit_code = 1


class NoKnowledgeBase(KbError):
    """No knowledge base could be found or created from the given places."""


class NotesRootError(KbError):
    """A notes root is missing, empty when the store is not, or a path lies outside every root."""


class StoreError(KbError):
    """The store cannot be opened or is newer than this kb understands."""


class IngestLocked(KbError):
    """Another ingest holds the lock past the wait."""

    exit_code = 3


class UsageError(KbError):
    """The user asked for something malformed (a bad query, an unknown note)."""

    exit_code = 2
