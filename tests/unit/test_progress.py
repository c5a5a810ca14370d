"""kb ingest's progress bar: one callback, the phases of an ingest in turn."""

from __future__ import annotations

from kb.cli.output import ProgressReporter


def test_an_update_after_a_full_bar_starts_the_embedding_phase() -> None:
    reporter = ProgressReporter(enabled=False)
    reporter.enabled = True  # as on a terminal (stderr is captured here)
    with reporter as update:
        for done in range(1, 45):
            update(done, 44)
        assert [t.description for t in reporter.bar.tasks] == ["ingesting"]
        update(32, 44)  # the first batch embedded: the notes count again from 0
        (task,) = reporter.bar.tasks
        assert (task.description, task.completed, task.total) == ("embedding for meaning", 32, 44)
        update(44, 44)
        update(44, 44)  # a third phase, if any, keeps the last label
        assert [t.description for t in reporter.bar.tasks] == ["embedding for meaning"]


def test_off_the_terminal_there_is_no_bar() -> None:
    with ProgressReporter(enabled=True) as update:  # pytest's stderr is not a terminal
        assert update is None
