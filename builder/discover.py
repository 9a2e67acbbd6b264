"""Find the markdown files under the source roots and decode them; ignore rules live here."""

from __future__ import annotations

import codecs
import fnmatch
import hashlib
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from mdfts.errors import MdftsError, SourceError, display
from mdfts.includes import Files, Folder, Tree, may_include

DEFAULT_INCLUDE = ("*.md", "*.markdown")
SKIP_DIRS = frozenset({"node_modules", "__pycache__"})


@dataclass(frozen=True, slots=True)
class SourceFile:
    path: str  # relative to the root it came from, "/" separators
    # The folder `path` is below, one Path shared by every file of a build: a Path per file was
    # ~400 bytes of each file's ~560 in the list a build holds (70 MB at 125k files).
    root: Path
    data: bytes | None = None  # the bytes of a file held in memory; None: read abspath
    below: str = ""  # the path below `root` when it is not `path` (a prefixed file in memory)
    # The other files of its source, for a file in memory whose include directives name some
    # (mdfts.includes); None for every other file
    tree: Files | None = None
    # The source folder it is below when that is not `root` (a build of several sources, whose
    # paths are relative to their common parent): the folder its includes are read from
    top: Path | None = None

    @property
    def abspath(self) -> Path:
        """The file; for a file held in memory, its source and path (not a file on disk)."""
        return self.root / (self.below or self.path)

    @property
    def filename(self) -> str:
        """abspath as text, without making a Path (a build reads and stats every file by it)."""
        return os.path.join(self.root, self.below or self.path)


def include_root(f: SourceFile) -> Path | Tree | None:
    """Where `f`'s include directives are read from (mdfts.includes): its source folder on disk,
    or the other files of its source in memory (None when it names none of them)."""
    if f.data is not None:
        return f.tree
    return f.root if f.top is None else _folder(f.top, f.root)


@lru_cache(maxsize=64)
def _folder(top: Path, base: Path) -> Folder:
    return Folder(top, base)  # (one a source folder: it resolves both paths once)


@dataclass(frozen=True, slots=True)
class FileSet:
    """Files already in memory (read from a GitHub tarball), chosen with `wanted()`; a source
    that discover() takes wherever it takes a folder."""

    name: str  # how mdfts_meta names the source, e.g. github:owner/repo
    prefix: str  # put before every path when the build has more than one source
    files: Mapping[str, bytes]  # path relative to the source's root → bytes
    meta: dict[str, str] = field(default_factory=dict)  # provenance rows for mdfts_meta
    commit: str = ""
    commit_time: int = 0  # seconds since the epoch; 0 when unknown
    folder: str = ""  # the folder in the repository that `files`' paths are below ("": its root)
    # other files below that folder that `files`' include directives name (a YAML snippet): read
    # by the directives, not indexed (mdfts.github.Snapshot.assets)
    assets: Mapping[str, bytes] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SourceText:
    path: str
    text: str  # decoded, BOM removed; line endings as in the file
    sha256: str
    size: int


@lru_cache(maxsize=256)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    """Translate a gitignore-like glob: `**/` spans folders, `*` and `?` stay within one."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[":
            j = pattern.find("]", i + 1)
            if j < 0:
                out.append(re.escape(pattern[i]))
                i += 1
            else:
                out.append(fnmatch.translate(pattern[i : j + 1])[4:-3])
                i = j + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def matches(relpath: str, pattern: str) -> bool:
    """True when a relative path matches a glob; a pattern without "/" matches the file name, and
    one ending in "/" a folder and all below it (as in .gitignore: `drafts/` at any depth)."""
    if pattern.endswith("/"):  # else `drafts/` matched no file name, and excluded nothing
        folder = pattern.rstrip("/")
        pattern = (folder if "/" in folder else "**/" + folder) + "/**"
    target = relpath if "/" in pattern else relpath.rsplit("/", 1)[-1]
    return _glob_regex(pattern.lstrip("/")).match(target) is not None


def _selected(relpath: str, include: Sequence[str], exclude: Sequence[str]) -> bool:
    return any(matches(relpath, p) for p in include) and not any(matches(relpath, p) for p in exclude)


def _skipped_dir(name: str) -> bool:
    return name.startswith(".") or name in SKIP_DIRS


def wanted(relpath: str, include: Sequence[str] = DEFAULT_INCLUDE, exclude: Sequence[str] = ()) -> bool:
    """True when a file at this path below a root is indexed: the walk's rules for a file known
    only by name (in an archive): no hidden file or folder, no node_modules, and the globs."""
    *folders, name = relpath.split("/")
    if name.startswith(".") or any(_skipped_dir(d) for d in folders):
        return False
    return _selected(relpath, include, exclude)


def no_file_matches(roots: Sequence[Path | str], include: Sequence[str], exclude: Sequence[str]) -> str:
    """The start of the error for globs that leave no file: `docs: no file matches --include *.md`."""
    where = ", ".join(display(str(r)) for r in roots)
    but = f", less --exclude {' '.join(exclude)}" if exclude else ""
    return f"{where}: no file matches --include {' '.join(include)}{but}"


def _inside(path: Path, root: Path) -> bool:
    return path.is_relative_to(root)


def discover(
    roots: Sequence[Path | FileSet],
    include: Sequence[str] = DEFAULT_INCLUDE,
    exclude: Sequence[str] = (),
    skip: Sequence[Path] = (),
    warn: Callable[[str], None] | None = None,
    on_error: str = "fail",
) -> list[SourceFile]:
    """The markdown files under the roots, sorted by relative path.

    One root: paths are relative to it. Several folders: relative to their common parent folder.
    A FileSet among several sources: its paths get its prefix, and a lone folder its own name, so
    sources never collide (two different files at one path fail the build).
    Hidden files and folders, node_modules and the paths in `skip` are left out; a symlink is
    followed only when it points at a file inside its root (folders behind links are not entered).
    A folder that cannot be listed fails the build, or with on_error="skip" is a warning.
    """
    if not roots:
        raise MdftsError("no source folder given")
    sets = [r for r in roots if isinstance(r, FileSet)]
    mixed = bool(sets) and len(roots) > 1
    resolved = []
    for root in roots:
        if isinstance(root, FileSet):
            continue
        if not root.exists():
            raise MdftsError(f"{root}: no such file or folder")
        resolved.append(root.resolve())
    if len(resolved) == 1:
        base = resolved[0] if resolved[0].is_dir() else resolved[0].parent
        base = base.parent if mixed else base
    elif resolved:
        base = Path(os.path.commonpath([r if r.is_dir() else r.parent for r in resolved]))
    skipped = {p.resolve() for p in skip}
    skipped_text = {str(p) for p in skipped}
    found: dict[str, SourceFile] = {}
    origin: dict[str, str] = {}  # path → the FileSet it came from ("" for a folder)

    def claim(rel: str, source: str) -> bool:
        """True when `rel` is still free; the same path from two different sources is an error."""
        if rel not in found:
            origin[rel] = source
            return True
        if origin[rel] != source:
            names = " and ".join(n or "a folder" for n in (origin[rel], source))
            raise MdftsError(f"{display(rel)}: two sources ({names}) have a file at this path; "
                             "give one source, or move one of the files")
        return False

    def add(abspath: Path, root: Path) -> None:
        """A file below `root` (a source folder), or that file itself."""
        folder = base if _inside(abspath, base) else abspath.parent
        rel = abspath.relative_to(folder).as_posix()
        real = abspath  # the walk starts at resolved roots and enters no linked folder
        if abspath.is_symlink():
            try:
                real = abspath.resolve(strict=True)
            except (OSError, RuntimeError):  # RuntimeError: a loop, before Python 3.13
                if warn:
                    warn(f"{display(rel)}: skipped, a broken symlink or a symlink loop")
                return
            if not _inside(real, root) or not real.is_file():
                if warn:
                    warn(f"{display(rel)}: skipped, a symlink that leads outside {root.name or root}")
                return
        if real not in skipped:
            keep(rel, folder, None if root == folder else root)

    def keep(rel: str, folder: Path, top: Path | None) -> None:
        """A file of a folder at `rel`, unless that path is taken (claim)."""
        if claim(rel, ""):
            found[rel] = SourceFile(rel, folder, top=top)

    def unlistable(err: OSError) -> None:
        where = Path(err.filename).relative_to(base).as_posix() if err.filename else "?"
        error = SourceError(where, None, f"cannot list the folder: {err.strerror or err}")
        if on_error == "fail":
            raise error
        if warn:
            warn(f"{error}; skipped")

    for root in resolved:
        if root.is_file():
            add(root, root.parent)
            continue
        top = None if root == base else root  # (keep's for every file here: one Path a source)
        for dirpath, dirnames, filenames in os.walk(root, onerror=unlistable, followlinks=False):
            here = Path(dirpath)
            for d in dirnames:
                if not d.startswith(".") and (here / d).is_symlink() and warn:
                    rel_dir = (here / d).relative_to(root).as_posix()
                    warn(f"{display(rel_dir)}: skipped, a symlink to a folder (not followed)")
            dirnames[:] = sorted(d for d in dirnames if not _skipped_dir(d) and not (here / d).is_symlink())
            # Paths as text, made once a folder: a Path and two relative_to() a file were most
            # of the walk's CPU (tldr-common: 4,612 files). A symlink takes add()'s general path.
            below_root = here.relative_to(root).as_posix()
            below_root = "" if below_root == "." else below_root + "/"
            folder = base if _inside(here, base) else here  # add()'s folder for each file here
            top_here = top if folder is base else None if root == folder else root
            below_folder = here.relative_to(folder).as_posix()
            below_folder = "" if below_folder == "." else below_folder + "/"
            for name in sorted(filenames):
                if not wanted(below_root + name, include, exclude):
                    continue
                abspath = os.path.join(dirpath, name)
                if os.path.islink(abspath) or abspath in skipped_text:
                    add(Path(abspath), root)
                    continue
                keep(below_folder + name, folder, top_here)
    for fs in sets:
        tree = Files({**fs.assets, **fs.files} if fs.assets else fs.files, fs.folder, fs.prefix if mixed else "")
        for rel, data in sorted(fs.files.items()):
            path = f"{fs.prefix}/{rel}" if mixed else rel
            if claim(path, fs.name):
                found[path] = SourceFile(path, Path(fs.name), data, "" if path == rel else rel,
                                         tree if may_include(data) else None)
    return [found[k] for k in sorted(found)]


_BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))


def _line_of(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def decode(path: str, data: bytes) -> str:
    """UTF-8 (a BOM is dropped) or UTF-16 with a BOM; anything else is an error naming the line."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            body = data[len(bom):]
            try:
                text = body.decode(encoding)
            except UnicodeDecodeError as err:
                raise SourceError(path, None, f"not valid {encoding.upper()} (byte {err.start + len(bom)})") from None
            # A BOM makes no NUL text: SQLite's length() and FTS5 stop reading a body at one.
            nul = text.find("\0")
            if nul >= 0:
                raise SourceError(path, text.count("\n", 0, nul) + 1, "binary file (NUL byte), not markdown")
            return text
    nul = data.find(b"\0")
    if nul >= 0:
        raise SourceError(path, _line_of(data, nul), "binary file (NUL byte), not markdown")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise SourceError(path, _line_of(data, err.start), "not valid UTF-8") from None


def _read_bytes(path: str) -> bytes:
    """The file's bytes: Path.read_bytes() less a Path and a buffered reader a file (a third of
    the read stage of a build that reuses nearly every file)."""
    with open(path, "rb", buffering=0) as fh:
        return fh.readall()


def read_source(source: SourceFile) -> SourceText:
    """Read and decode one file; its sha256 is over the bytes as stored."""
    try:
        source.path.encode("utf-8")
    except UnicodeEncodeError:  # os.walk hands undecodable bytes over as lone surrogates
        raise SourceError(source.path, None, "file name is not valid UTF-8; rename it") from None
    try:
        data = _read_bytes(source.filename) if source.data is None else source.data
    except OSError as err:
        raise SourceError(source.path, None, f"cannot read: {err.strerror or err}") from None
    text = decode(source.path, data)
    return SourceText(source.path, text, hashlib.sha256(data).hexdigest(), len(data))
