"""``kb lsp`` and files changed on disk (issue 24 item 1): the server asks a client that
can register dynamically to watch the notes roots, ingests only the files the client
names (in the background, a burst as one ingest), and reports a long ingest with
``$/progress`` and the count."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as t
from pygls.uris import from_fs_path
from test_lsp import Session, full_capabilities, make_notes_kb

pytestmark = pytest.mark.asyncio


def watching_capabilities() -> t.ClientCapabilities:
    capabilities = full_capabilities()
    assert capabilities.workspace is not None
    capabilities.workspace.did_change_watched_files = t.DidChangeWatchedFilesClientCapabilities(
        dynamic_registration=True, relative_pattern_support=True
    )
    return capabilities


class Watching(Session):
    """A session that answers the server's requests as an editor does, keeping them."""

    def __init__(self) -> None:
        super().__init__()
        self.registrations: list[t.Registration] = []
        self.progress: list[Any] = []

        @self.client.feature(t.CLIENT_REGISTER_CAPABILITY)
        def register(params: t.RegistrationParams) -> None:
            self.registrations += params.registrations
            self.changed.set()

        @self.client.feature(t.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def create(params: t.WorkDoneProgressCreateParams) -> None:
            return None

        @self.client.feature(t.PROGRESS)
        def progress(params: t.ProgressParams) -> None:
            self.progress.append(params.value)
            self.changed.set()

    def files_changed(self, *changes: tuple[Path, t.FileChangeType]) -> None:
        self.client.workspace_did_change_watched_files(
            t.DidChangeWatchedFilesParams(
                [t.FileEvent(from_fs_path(str(path)) or "", kind) for path, kind in changes]
            )
        )


async def labels(session: Session, uri: str, typed: str) -> list[str]:
    return [item.label for item in await session.complete(uri, 0, 2 + len(typed))]


async def test_the_notes_roots_are_watched_and_changed_files_ingested(tmp_path: Path) -> None:
    home = make_notes_kb(tmp_path)
    session = Watching()
    await session.start("--kb", str(home), capabilities=watching_capabilities())
    await session.until(lambda: bool(session.registrations))
    (registration,) = session.registrations
    assert registration.method == t.WORKSPACE_DID_CHANGE_WATCHED_FILES
    (watcher,) = registration.register_options["watchers"]  # type: ignore[index]
    assert watcher["globPattern"] == {
        "baseUri": from_fs_path(str(home / "notes")),
        "pattern": "**/*.{md,markdown}",
    }

    uri = session.open(home / "notes/posts/draft-w.md", "[[分布式锁\n")
    assert "分布式锁的三种写法" not in await labels(session, uri, "分布式锁")
    new = home / "notes/engineering/distributed-locks.md"
    new.write_text("---\ntitle: 分布式锁的三种写法\n---\n\n正文\n", encoding="utf-8")
    gone = home / "notes/engineering/softmax-numerics.md"
    gone.unlink()
    outside = tmp_path / "elsewhere.md"  # outside the roots: never ingested, no error
    outside.write_text("# x\n", encoding="utf-8")
    session.files_changed(
        (new, t.FileChangeType.Created),
        (gone, t.FileChangeType.Deleted),
        (outside, t.FileChangeType.Created),
    )
    found: list[str] = []
    for _ in range(150):  # the ingest runs in the background: ask until it is done
        found = await labels(session, uri, "分布式锁")
        if "分布式锁的三种写法" in found:
            break
        await asyncio.sleep(0.1)
    assert "分布式锁的三种写法" in found
    assert "Softmax 的数值稳定性" not in await labels(session, uri, "Softmax")
    stderr = await session.stop()
    assert "Traceback" not in stderr


async def test_no_registration_for_a_client_that_cannot(tmp_path: Path) -> None:
    home = make_notes_kb(tmp_path)
    session = Watching()
    await session.start("--kb", str(home))  # no didChangeWatchedFiles capability
    uri = session.open(home / "notes/posts/draft-x.md", "[[Redis\n")
    assert await labels(session, uri, "Redis")  # the server has answered since initialized
    assert session.registrations == []
    assert "Traceback" not in await session.stop()


@pytest.mark.slow
async def test_a_long_first_build_reports_progress_with_the_count(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    for folder in range(20):
        (notes / f"f{folder:02d}").mkdir(parents=True)
        for number in range(100):
            (notes / f"f{folder:02d}" / f"n{number:03d}.md").write_text(
                f"# 笔记 {folder}-{number}\n\n正文 [[n{(number + 1) % 100:03d}]] 显存带宽\n" * 3,
                encoding="utf-8",
            )
    (tmp_path / "kb.yaml").write_text("roots: [notes]\n", encoding="utf-8")
    session = Watching()
    await session.start("--kb", str(tmp_path))
    await session.until(lambda: any(p.get("kind") == "end" for p in session.progress), 120)
    kinds = [p["kind"] for p in session.progress]
    assert kinds[0] == "begin" and kinds[-1] == "end"
    begin = session.progress[0]
    assert begin["title"] == "kb: building the store"
    assert begin["message"].endswith("/2000 notes")
    assert session.progress[-1]["message"] == "2000 notes"
    assert "Traceback" not in await session.stop()
