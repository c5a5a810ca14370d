"""``kb lsp``: the editor server. A thin face over the facade, on pygls 2.

Each handler turns the editor's positions into lines and string indexes (kb.lsp.positions),
asks the facade, and turns the answer into lsprotocol types (kb.lsp.navigation, kb.lsp.edits
and their siblings). The open buffer is the truth for its note; saving or a change on disk
re-ingests only the files named, in a background thread, so no request waits for an ingest.
Every handler answers a failure with an empty answer and one line on stderr, never a
traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, BinaryIO, TypeVar
from urllib.parse import unquote

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.io_ import StdoutWriter, run_async
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.uris import from_fs_path, to_fs_path

from kb import __version__
from kb.errors import KbError
from kb.knowledge_base import KnowledgeBase
from kb.lsp import features
from kb.lsp.edits import FILE_RENAMES
from kb.lsp.framing import FramedReader
from kb.lsp.outline import diagnostics as check_document
from kb.lsp.positions import UTF16, choose_encoding
from kb.lsp.progress import Progress

log = logging.getLogger("kb.lsp")
F = TypeVar("F", bound=Callable[..., Any])
DIAGNOSTICS_DELAY = 0.1  # seconds of quiet typing before the open note is checked again
EXPECT_FOR = 60.0  # seconds the files of a proposed workspace edit are looked at


_INVALID = object()  # a message that could not be read: answered already, then dropped


class KbProtocol(LanguageServerProtocol):
    """pygls's protocol, answering a request it cannot read (params of the wrong shape,
    a position of -1) with InvalidParams instead of leaving the client waiting forever."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            method = data.get("method") if isinstance(data, dict) else None
            if method is not None and "id" in data:
                error = types.ResponseError(code=-32602, message=f"invalid params for {method}")
                self._send_data(types.ResponseErrorMessage(id=data["id"], error=error))
            log.warning("dropped a message that does not fit the protocol (%s): %s", method, exc)
            return _INVALID

    def _handle_request(self, msg_id: Any, method_name: str, params: Any) -> None:
        # The protocol allows one initialize: a second would build the workspace anew,
        # forgetting the open documents, so it is answered InvalidRequest.
        if method_name == types.INITIALIZE and self._workspace is not None:
            error = types.ResponseError(
                code=-32600, message="kb lsp: the server is already initialized"
            )
            self._send_data(types.ResponseErrorMessage(id=msg_id, error=error))
            return
        super()._handle_request(msg_id, method_name, params)

    def handle_message(self, message: Any) -> None:
        if message is _INVALID:
            return
        if not hasattr(message, "jsonrpc"):
            log.warning("dropped a message that is not a JSON-RPC object")
            return
        super().handle_message(message)


class KbLanguageServer(LanguageServer):
    """The server and what it keeps between requests: the knowledge base, the position
    encoding agreed with the client, the background ingest and diagnostics."""

    def __init__(self, kb_dir: Path | None) -> None:
        super().__init__(
            "kb",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=KbProtocol,
        )
        self.kb_dir = kb_dir
        self.kb: KnowledgeBase | None = None
        self.kb_problem = ""  # why there is no knowledge base, told once after initialized
        self.encoding = UTF16
        self.background = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kb-ingest")
        self.checker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kb-check")
        self.pending: dict[str, asyncio.Task[None]] = {}
        self.ingest_lock = threading.Lock()
        self.started = False  # the store built (if missing) and the names warmed
        self.warming = False  # the warm-up has been handed to the background thread
        self._busy = 0  # requests being answered (the warm-up steps aside meanwhile)
        self._busy_lock = threading.Lock()
        # files a proposed workspace edit changes: until when, and their stamp before
        self.expected: dict[Path, tuple[float, tuple[int, int] | None]] = {}
        self.queue_lock = threading.Lock()  # guards the four below
        self.queued: set[Path] = set()
        self.queued_all = False
        self.queued_title = ""
        self.drain_pending = False
        self.loop: asyncio.AbstractEventLoop | None = None
        # The last buffer read per document, reused while its text and the store are the
        # same (a hover, a definition and the diagnostics of one edit parse it once).
        self.buffers: dict[str, tuple[str, int, Any]] = {}

    def report_server_error(self, error: Exception, source: Any) -> None:
        # pygls would pop up "Error in server" for a malformed message; one log line is
        # enough (the sender gets the protocol's error when there was a request id).
        log.warning("%s", _one_line(error))
        if isinstance(error, json.JSONDecodeError | UnicodeDecodeError):
            self.parse_error(f"the message is not JSON ({_one_line(error)})")

    def parse_error(self, reason: str) -> None:
        """JSON-RPC's answer to bytes that are no message (it has no id to answer)."""
        error = {"code": -32700, "message": f"parse error: {reason}"}
        self.protocol._send_data({"jsonrpc": "2.0", "id": None, "error": error})

    def framing_error(self, reason: str) -> None:
        log.warning("unreadable input (%s); reading on from the next message", reason)
        self.parse_error(reason)

    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """pygls's stdio server with kb's reader in front of its loop (kb.lsp.framing):
        bad framing is answered and skipped, never a hang or a MemoryError."""
        self._stop_event = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        reader = FramedReader(stdin or sys.stdin.buffer, self.thread_pool, self.framing_error)
        try:
            asyncio.run(
                run_async(
                    stop_event=self._stop_event,
                    reader=reader,
                    protocol=self.protocol,
                    logger=log,
                    error_handler=self.report_server_error,
                )
            )
        except BrokenPipeError:
            log.warning("the editor went away; stopping")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()

    # -- the open documents --------------------------------------------------------------

    def open_text(self, uri: str) -> str | None:
        """The text of an open document, or None when it is not open."""

        document = self.workspace.text_documents.get(unquote(uri))
        if document is None or document._source is None:
            return None
        return document.source

    def text_at(self, file: Path) -> str | None:
        """An open file's unsaved text (by path), else None."""
        return self.open_text(from_fs_path(str(file)) or "")

    def open_documents(self) -> dict[Path, tuple[str, str, int | None]]:
        """Every open file by path: its URI as the client wrote it, its unsaved text and
        the version the client gave it."""
        found = {}
        for uri, document in list(self.workspace.text_documents.items()):
            path = to_fs_path(uri)
            if path is not None and document._source is not None:
                found[Path(path)] = (uri, document.source, document.version)
        return found

    def open_files(self) -> dict[Path, str]:
        """Every open file's unsaved text, by path: what the editor shows is what links
        are found in and what edits apply to."""
        return {file: text for file, (_, text, _) in self.open_documents().items()}

    def document_text(self, uri: str) -> str | None:
        """The open buffer, else the file on disk (decoded as ingest decodes it), else
        None: a document never opened is answered from disk when it exists."""
        text = self.open_text(uri)
        if text is not None:
            return text
        path = to_fs_path(uri)
        if path is None:
            return None
        from kb.parse.decode import BinaryFile, decode_note  # deferred: 2 modules more

        try:
            return decode_note(Path(path).read_bytes()).text
        except (OSError, BinaryFile):
            return None

    def buffer_for(self, uri: str, file: Path, text: str) -> Any:
        """The open note read by the facade, reused while nothing changed."""
        kb = self.kb
        assert kb is not None
        try:
            generation = kb.generation()
        except KbError:
            generation = -1
        kept = self.buffers.get(uri)
        if kept is not None and kept[0] == text and kept[1] == generation:
            return kept[2]
        buffer = kb.editor.read_buffer(file, text)
        if len(self.buffers) > 100:  # documents asked about but never opened: forget them
            self.buffers.clear()
        self.buffers[uri] = (text, generation, buffer)
        return buffer

    @property
    def busy(self) -> bool:
        return self._busy > 0

    @contextlib.contextmanager
    def answering(self) -> Iterator[None]:
        """While a request (or the open note's check) is being answered."""
        with self._busy_lock:
            self._busy += 1
        try:
            yield
        finally:
            with self._busy_lock:
                self._busy -= 1

    # -- background work ---------------------------------------------------------------

    def start(self) -> None:
        """Once: build the store when there is none (with progress; its end warms the
        names), else warm them if initialize did not already."""
        if self.started or self.kb is None:
            return
        self.started = True
        if not self.kb.config.store_path.exists():
            self.ingest_in_background([], "kb: building the store")
        else:
            self.warm_in_background()

    def warm_in_background(self) -> None:
        """Once, in the background thread: load what the first completion needs (the
        store, the names and their indexes, the modules they import). Called as soon as
        initialize is answered, so the warm-up runs while the editor is still sending
        ``initialized`` and opening its first note, not when completion is first asked."""
        kb = self.kb
        if self.warming or kb is None or not kb.config.store_path.exists():
            return  # no store yet: the ingest that builds it warms at its end
        self.warming = True
        self.background.submit(_warm, self, kb)
        with contextlib.suppress(KbError):
            kb.generation()  # this thread's store (requests are answered here), opened now

    def ingest_in_background(self, paths: list[Path], title: str) -> None:
        """Re-ingest ``paths`` (or every note, for an empty list) in the ingest thread,
        then check the open notes again; never awaited by a request. Paths named while
        an ingest runs wait for the next one, all together (a checkout's burst of
        changes is one ingest, not one per file)."""
        kb = self.kb
        if kb is None:
            return
        with self.queue_lock:
            if paths:
                self.queued.update(paths)
            else:
                self.queued_all = True
            self.queued_title = title
            if self.drain_pending:
                return
            self.drain_pending = True
        self.background.submit(self._drain, kb)

    def _drain(self, kb: KnowledgeBase) -> None:
        with self.queue_lock:
            paths = [] if self.queued_all else sorted(self.queued)
            title = self.queued_title
            if len(paths) > 1:
                title = f"kb: ingesting {len(paths)} changed files"
            self.queued.clear()
            self.queued_all = False
            self.drain_pending = False
        self._ingest(kb, paths, title)

    def _ingest(self, kb: KnowledgeBase, paths: list[Path], title: str) -> None:
        progress = Progress(self, title)
        try:
            with self.ingest_lock:
                if paths:
                    stats = kb.ingest_changed(paths, lock_wait=30, progress=progress.update)
                else:
                    stats = kb.ingest(progress=progress.update, lock_wait=30)
            progress.done(f"{getattr(stats, 'added', 0) + getattr(stats, 'updated', 0)} notes")
        except KbError as exc:
            progress.done(str(exc))
            log.warning("ingest: %s", _one_line(exc))
        except Exception as exc:
            progress.done("failed")
            log.warning("ingest failed: %s", _one_line(exc))
        if self.loop is not None:
            self.loop.call_soon_threadsafe(self.check_all_open)
        _warm(self, kb)  # the names changed: completion's index is built again here

    def expect_changes(self, files: list[Path]) -> None:
        """Files a workspace edit kb proposed will change (a note created, moved, its
        links edited): each is ingested once it changes on disk. An editor applying the
        edit may tell nothing (Neovim 0.7 neither attaches the buffers it creates nor
        watches files), so they are looked at each second, for a minute."""
        first = not self.expected
        until = time.monotonic() + EXPECT_FOR
        for file in files:
            self.expected[file] = (until, _stamp(file))
        if first and self.expected and self.loop is not None:
            self.loop.call_later(1.0, self._look_for_expected)

    def _look_for_expected(self) -> None:
        now = time.monotonic()
        changed = []
        for file, (until, stamp) in list(self.expected.items()):
            new = _stamp(file)
            if new != stamp and (new is None or new[0] > 0):  # gone, or written
                changed.append(file)
                del self.expected[file]
            elif now > until:
                del self.expected[file]
        if changed:
            self.ingest_in_background(changed, "kb: ingesting the edited notes")
        if self.expected and self.loop is not None:
            self.loop.call_later(1.0, self._look_for_expected)

    def check_all_open(self) -> None:
        for uri in list(self.workspace.text_documents):
            self.check_later(uri, delay=0)

    def check_later(self, uri: str, delay: float = DIAGNOSTICS_DELAY) -> None:
        """Publish the open note's problems after ``delay`` seconds without another edit."""
        waiting = self.pending.pop(uri, None)
        if waiting is not None:
            waiting.cancel()
        self.pending[uri] = asyncio.ensure_future(self._check(uri, delay))

    def _check_now(self, uri: str, text: str) -> list[types.Diagnostic]:
        with self.answering():
            return check_document(self, uri, text)

    async def _check(self, uri: str, delay: float) -> None:
        await asyncio.sleep(delay)
        text = self.open_text(uri)
        if text is None:
            return
        loop = asyncio.get_running_loop()
        diagnostics = await loop.run_in_executor(self.checker, self._check_now, uri, text)
        if self.open_text(uri) == text:  # else a newer edit will publish its own
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics)
            )


def _stamp(file: Path) -> tuple[int, int] | None:
    """(size, mtime in ns) of a file, None when there is none."""
    try:
        stat = file.stat()
    except OSError:
        return None
    return stat.st_size, stat.st_mtime_ns


def safely(default: Callable[[], Any]) -> Callable[[F], F]:
    """A handler that answers ``default()`` on any failure, with one log line."""

    def wrap(handler: F) -> F:
        @functools.wraps(handler)
        def run(*args: Any) -> Any:
            try:
                with args[0].answering():
                    return handler(*args)
            except JsonRpcException:
                raise  # the protocol's own error, for the client
            except KbError as exc:
                log.warning("%s: %s", handler.__name__, _one_line(exc))
            except Exception as exc:
                log.warning("%s failed: %s", handler.__name__, _one_line(exc))
            return default()

        return run  # type: ignore[return-value]

    return wrap


def _one_line(error: BaseException) -> str:
    text = str(error) or type(error).__name__
    return " ".join(text.split())[:300]


def build_server(kb_dir: Path | None) -> KbLanguageServer:
    server = KbLanguageServer(kb_dir)

    @server.feature(types.INITIALIZE)
    def initialize(ls: KbLanguageServer, params: types.InitializeParams) -> None:
        ls.loop = asyncio.get_event_loop()
        general = params.capabilities.general
        ls.encoding = choose_encoding(
            [str(e.value if hasattr(e, "value") else e) for e in general.position_encodings]
            if general and general.position_encodings
            else None
        )
        ls.kb, ls.kb_problem = open_knowledge_base(ls.kb_dir, _workspace_folder(params))
        # pygls writes this request's answer as soon as the handler returns; the warm-up
        # is queued behind it, so the answer never waits for it.
        ls.loop.call_soon(ls.warm_in_background)

    @server.feature(types.INITIALIZED)
    def initialized(ls: KbLanguageServer, params: types.InitializedParams) -> None:
        if ls.kb is None:
            ls.window_show_message(
                types.ShowMessageParams(types.MessageType.Info, f"kb: {ls.kb_problem}")
            )
            return
        ls.start()
        watch_notes(ls)

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: KbLanguageServer, params: Any) -> None:
        for task in ls.pending.values():
            task.cancel()
        ls.background.shutdown(wait=False, cancel_futures=True)
        ls.checker.shutdown(wait=False, cancel_futures=True)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: KbLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        # After the usual pause: a request sent with the opening reads the buffer first,
        # and the check then reuses it.
        ls.start()  # a client that never said `initialized` is served all the same
        ls.check_later(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: KbLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.check_later(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: KbLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.buffers.pop(uri, None)
        waiting = ls.pending.pop(uri, None)
        if waiting is not None:
            waiting.cancel()
        ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=[])
        )

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: KbLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        path = to_fs_path(params.text_document.uri)
        if path is not None and ls.kb is not None and ls.kb.editor.file_place(Path(path)):
            ls.ingest_in_background([Path(path)], "kb: ingesting the saved note")

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched(ls: KbLanguageServer, params: types.DidChangeWatchedFilesParams) -> None:
        kb = ls.kb
        if kb is None:
            return
        paths = [Path(p) for c in params.changes if (p := to_fs_path(c.uri)) is not None]
        inside = [p for p in paths if kb.editor.file_place(p)]
        if inside:
            ls.ingest_in_background(inside, f"kb: ingesting {len(inside)} changed files")

    @server.feature(types.WORKSPACE_DID_RENAME_FILES, FILE_RENAMES)
    def did_rename_files(ls: KbLanguageServer, params: types.RenameFilesParams) -> None:
        # The store follows a rename made in the editor's file tree (its links were
        # rewritten by willRenameFiles): the old and new files, ingested.
        kb = ls.kb
        if kb is None:
            return
        paths = [
            Path(p)
            for renamed in params.files
            for p in (to_fs_path(renamed.old_uri), to_fs_path(renamed.new_uri))
            if p is not None
        ]
        inside = [p for p in paths if kb.editor.file_place(p)]
        if inside:
            ls.ingest_in_background(inside, "kb: ingesting the renamed notes")

    features.register(server, safely)
    return server


WATCHED = "**/*.{md,markdown}"  # kb's note suffixes (kb.models.NOTE_SUFFIXES)


def watch_notes(ls: KbLanguageServer) -> None:
    """Ask a client that can (dynamic registration) to tell of note files changed on
    disk, under each notes root; such changes are ingested as they come."""
    workspace = ls.client_capabilities.workspace
    watched = workspace.did_change_watched_files if workspace else None
    if ls.kb is None or watched is None or not watched.dynamic_registration:
        return
    if watched.relative_pattern_support:
        patterns: list[Any] = [
            types.RelativePattern(from_fs_path(str(root.path)) or root.path.as_uri(), WATCHED)
            for root in ls.kb.config.roots
        ]
    else:
        patterns = [WATCHED]  # matched anywhere; changes outside the roots are dropped
    options = types.DidChangeWatchedFilesRegistrationOptions(
        watchers=[types.FileSystemWatcher(glob_pattern=p) for p in patterns]
    )
    registration = types.Registration(
        id="kb-notes", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES, register_options=options
    )

    def registered(future: Any) -> None:
        error = None if future.cancelled() else future.exception()
        if error is not None:  # the client refused: saves still ingest
            log.info("the client did not watch the notes: %s", _one_line(error))

    future = ls.client_register_capability(types.RegistrationParams([registration]))
    future.add_done_callback(registered)


def _warm(ls: KbLanguageServer, kb: KnowledgeBase) -> None:
    """Build what completion needs (names, pinyin, the fuzzy index) before it is asked,
    stepping aside whenever a request is being answered (they share one interpreter)."""

    def pause() -> None:
        while ls.busy:
            time.sleep(0.002)

    try:
        kb.editor.warm(pause)
    except Exception as exc:
        log.info("warming up: %s", _one_line(exc))


def _workspace_folder(params: types.InitializeParams) -> Path | None:
    uri = None
    if params.workspace_folders:
        uri = params.workspace_folders[0].uri
    elif params.root_uri:
        uri = params.root_uri
    elif params.root_path:
        return Path(params.root_path)
    path = to_fs_path(uri) if uri else None
    return Path(path) if path else None


def open_knowledge_base(
    kb_dir: Path | None, folder: Path | None
) -> tuple[KnowledgeBase | None, str]:
    """The knowledge base kb finds the usual way: ``--kb``, else from the workspace folder
    up, else from the current folder. None and why, when there is none."""
    try:
        if kb_dir is not None:
            return KnowledgeBase.open(kb_dir), ""
        return KnowledgeBase.open(None, cwd=folder), ""
    except KbError as exc:
        return None, f"no knowledge base ({_one_line(exc)}); links and outline only"
    except OSError as exc:
        return None, f"no knowledge base ({_one_line(exc)}); links and outline only"


class OneLineFormatter(logging.Formatter):
    """``kb lsp: message`` on one line; an exception adds its message, never a traceback."""

    def format(self, record: logging.LogRecord) -> str:
        # pygls puts a formatted traceback after the first line of some messages.
        message = record.getMessage().split("\n", 1)[0]
        if record.exc_info and record.exc_info[1] is not None:
            message = f"{message}: {_one_line(record.exc_info[1])}"
        return "kb lsp: " + " ".join(message.split())[:500]

    def formatException(self, ei: Any) -> str:
        return ""


def serve(kb_dir: Path | None) -> None:
    """Run the server on stdin/stdout until the client says exit."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(OneLineFormatter())
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(logging.WARNING)
    server = build_server(kb_dir)
    server.start_io()
    # The protocol's exit code: 0 after a shutdown request, 1 when the client exited
    # (or went away) without one. pygls swallows its own sys.exit, so it is said here.
    sys.exit(0 if server.protocol._shutdown else 1)
