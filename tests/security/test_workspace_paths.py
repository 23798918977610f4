"""plankit.workspace, checking paths: what a plan may name, where it leads, which rules
protect it.  Each refusal is one line with its code; nothing outside the root is named
as inside it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from plankit.protected_paths import check_rule, protected_by, protected_links
from plankit.workspace import (
    PathRefused,
    as_written,
    check_path,
    check_relative,
    components,
    find_root,
    is_inside,
    relative,
    relative_posix,
    resolve,
    shorten,
)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "proj"
    (path / "src").mkdir(parents=True)
    (path / "src" / "app.py").write_text("x = 1\n")
    return path


# --- what a plan may name -----------------------------------------------------------------

REFUSED = [
    ("", "the path is empty"),
    ("notes\0.txt", "the path contains a NUL byte"),
    ("~/notes.txt", "paths starting with ~ are refused; give a path inside the project"),
    ("~", "paths starting with ~ are refused; give a path inside the project"),
    ("/etc/passwd", "absolute paths are refused; give a path relative to the project root"),
    ("\\Windows\\win.ini", "absolute paths are refused; give a path relative to the project root"),
    (
        "C:/Users/me/notes.txt",
        "absolute paths are refused; give a path relative to the project root",
    ),
    ("C:", "absolute paths are refused; give a path relative to the project root"),
    ("..", "'..' is refused; paths must stay inside the project"),
    ("src/../../etc/passwd", "'..' is refused; paths must stay inside the project"),
    ("src\\..\\..\\secret", "'..' is refused; paths must stay inside the project"),
]


@pytest.mark.parametrize(("path", "message"), REFUSED)
def test_paths_that_could_leave_the_project_are_refused(path: str, message: str) -> None:
    assert check_path(path) == ("path-refused", message)
    assert check_relative(path) == message


@pytest.mark.parametrize(
    "path", ["a", "src/app.py", "./src//app.py", "...", "a..b/c..", "x~", "notes:2026.md"]
)
def test_ordinary_paths_are_accepted(path: str) -> None:
    assert check_path(path) is None
    assert check_relative(path) is None


def test_a_name_of_255_bytes_is_accepted_and_256_refused() -> None:
    assert check_path("src/" + "n" * 255) is None
    assert check_path("€" * 85) is None  # 255 bytes in 85 characters
    assert check_path("src/" + "n" * 256) == (
        "name-too-long",
        "a name in the path is 256 bytes long; file systems take at most 255 (NAME_MAX): "
        "use a shorter name",
    )
    assert check_path("€" * 86) is not None and check_path("€" * 86)[0] == "name-too-long"  # type: ignore[index]


def test_128_components_are_accepted_and_129_refused() -> None:
    assert check_path("/".join(["d"] * 128)) is None
    assert check_path("./" + "/".join(["d"] * 128) + "/") is None  # "." and "" do not count
    assert check_path("/".join(["d"] * 129)) == (
        "path-too-deep",
        "the path has 129 components; at most 128 are accepted: use a shallower path",
    )


def test_a_path_of_4096_bytes_is_accepted_and_4097_refused() -> None:
    longest = "/".join(["p" * 200] * 20) + "/" + "x" * 76  # 4,096 bytes
    assert len(longest) == 4096 and check_path(longest) is None
    assert check_path(longest + "x") == (
        "path-too-long",
        "the path is 4,097 bytes long; at most 4,096 are accepted (PATH_MAX): use a shorter path",
    )
    wide = "/".join(["€" * 80] * 17)  # 1,376 characters, 4,096 bytes
    assert check_path(wide) is None and check_path(wide + "x")[0] == "path-too-long"  # type: ignore[index]


def test_components_skip_empty_and_dot_names() -> None:
    assert components("./src//app.py/.") == ["src", "app.py"]
    assert components(".") == []


def test_a_long_path_is_cut_in_the_middle_for_messages() -> None:
    assert shorten("a" * 100) == "a" * 100
    path = "b" * 60 + "c" * 61
    assert shorten(path) == "b" * 49 + "…" + "c" * 49 + " (121 characters)"
    assert shorten("x" * 1234, 10) == "xxxx…xxxx (1,234 characters)"
    assert shorten("abcdef", 2) == "a…f (6 characters)"


# --- where a path leads -------------------------------------------------------------------


def test_resolve_gives_the_real_path_inside_the_root(root: Path) -> None:
    (root / "link").symlink_to("src", target_is_directory=True)
    real = root.resolve()
    assert resolve(root, "src/app.py") == real / "src" / "app.py"
    assert resolve(root, "link/app.py") == real / "src" / "app.py"
    assert resolve(root, "new/dir/file.md") == real / "new" / "dir" / "file.md"
    assert resolve(root, ".") == real
    assert resolve(root, "./src/.") == real / "src"


def test_resolve_answers_as_path_resolve_does_for_what_a_plan_names(tmp_path: Path) -> None:
    # a thesis project: files, folders, links inside it, and paths not made yet
    root = tmp_path / "thesis-LaTeX"
    (root / "chapters" / "intro").mkdir(parents=True)
    (root / "chapters" / "intro" / "main.tex").write_text("\\section{Intro}\n")
    (root / "README.md").write_text("# Thesis\n")
    (root / "current").symlink_to("chapters/intro", target_is_directory=True)
    (root / "main.tex").symlink_to("chapters/intro/main.tex")
    (root / "draft.tex").symlink_to("chapters/draft.tex")  # dangling
    for path in (
        "chapters/intro/main.tex",
        "chapters/intro/figures/plot.pdf",
        "appendix/a/proofs.tex",
        "README.md",
        "README.md/notes.txt",
        "./chapters//intro/",
        "current/main.tex",
        "current/new.tex",
        "main.tex",
        "draft.tex",
        ".",
    ):
        assert resolve(root, path) == (root / path).resolve(), path


def test_a_path_as_written_is_where_resolve_leads_when_no_link_is_on_the_way(
    tmp_path: Path,
) -> None:
    # what a CREATE's write walks first (it resolves the path only at a link)
    root = tmp_path / "thesis-LaTeX"
    (root / "chapters" / "intro").mkdir(parents=True)
    (root / "README.md").write_text("# Thesis\n")
    for path in ("chapters/intro/main.tex", "appendix/a/proofs.tex", "./chapters//intro/", "."):
        assert as_written(root, path) == resolve(root, path) == (root / path).resolve(), path
    assert as_written(Path("/"), "etc/hostname") == Path("/etc/hostname")
    assert as_written(Path("/"), ".") == Path("/")
    for path, message in REFUSED[:6]:
        with pytest.raises(PathRefused) as refused:
            as_written(root, path)
        assert (refused.value.code, refused.value.detail) == ("path-refused", message), path
        assert refused.value.path == path


def test_resolving_looks_only_below_the_root_and_down_to_the_first_missing_name(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = root.resolve()
    resolve(root, "src/app.py")  # the root itself is resolved once per process
    looked: list[str] = []
    lstat = os.lstat

    def counted(path: str, *args: object, **kwargs: object) -> os.stat_result:
        looked.append(os.fspath(path))
        return lstat(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "lstat", counted)
    assert resolve(root, "src/new/deeper/file.py") == real / "src/new/deeper/file.py"
    assert looked == [f"{real}/src", f"{real}/src/new"]


def test_the_file_system_root_as_project_root_resolves_as_itself() -> None:
    assert resolve(Path("/"), ".") == Path("/")
    assert resolve(Path("/"), "./") == Path("/")


def test_a_root_reached_through_a_symbolic_link_keeps_its_paths_inside(
    root: Path, tmp_path: Path
) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(root, target_is_directory=True)
    assert resolve(alias, "src/app.py") == root.resolve() / "src" / "app.py"
    assert relative(alias, root / "src" / "app.py") == "src/app.py"
    assert is_inside(alias, root / "src")


def test_a_symbolic_link_leading_out_is_refused_wherever_it_is(root: Path, tmp_path: Path) -> None:
    sibling = tmp_path / "proj-secrets"  # shares the root's name as a prefix
    sibling.mkdir()
    (root / "src" / "out").symlink_to(sibling, target_is_directory=True)
    (root / "up").symlink_to("..", target_is_directory=True)
    for path in ("src/out/key.pem", "src/out", "up", "up/proj-secrets/key.pem"):
        with pytest.raises(PathRefused) as caught:
            resolve(root, path)
        err = caught.value
        assert (err.code, err.path) == ("path-refused", path)
        assert err.detail == "goes through a symbolic link that leads outside the project; refused"


def test_refusals_name_the_path_shortened(root: Path) -> None:
    path = "/" + "a" * 300
    with pytest.raises(PathRefused) as caught:
        resolve(root, path)
    assert caught.value.path == shorten(path)
    assert len(str(caught.value)) < 250


def test_a_symlink_loop_cannot_be_resolved(root: Path) -> None:
    (root / "loop").symlink_to("loop")
    with pytest.raises(PathRefused) as caught:
        resolve(root, "loop/x.txt")
    assert caught.value.detail.startswith("cannot be resolved (")
    assert caught.value.detail.endswith("); refused")


def test_the_root_counts_in_the_length_of_a_path(root: Path) -> None:
    real = os.fspath(root.resolve())
    room = 4096 - len(real) - 1  # what a path may take after the root and a slash
    groups = (room - 1) // 201
    fits = ("q" * 200 + "/") * groups + "z" * (room - 201 * groups)  # the last: 1 to 201
    assert len(fits) == room
    assert resolve(root, fits) == Path(real, fits)
    with pytest.raises(PathRefused) as caught:
        resolve(root, fits + "z")
    assert caught.value.code == "path-too-long"
    assert caught.value.detail == (
        "the path is too long: with the project root it passes 4,096 bytes (PATH_MAX); "
        "use a shorter path"
    )


def test_inside_means_the_root_or_under_it(root: Path, tmp_path: Path) -> None:
    (tmp_path / "proj2").mkdir()
    (root / "out").symlink_to(tmp_path / "proj2", target_is_directory=True)
    assert is_inside(root, root)
    assert is_inside(root, root / "src" / "app.py")
    assert is_inside(root, root / "not-yet" / "made.md")
    assert not is_inside(root, tmp_path / "proj2")  # a sibling whose name starts the same
    assert not is_inside(root, root / "out" / "x")
    assert not is_inside(root, tmp_path)


def test_relative_is_a_posix_path_from_the_root(root: Path) -> None:
    assert relative(root, root / "src" / "app.py") == "src/app.py"
    assert relative(root, root / "src" / ".." / "src") == "src"


@pytest.mark.parametrize(
    ("path", "top", "expected"),
    [
        ("/home/ana/proj/src/app.py", "/home/ana/proj", "src/app.py"),
        ("/home/ana/proj", "/home/ana/proj", "."),
        ("/home/ana/project/notes.md", "/home/ana/proj", None),  # a longer name is not under
        ("/home/ana", "/home/ana/proj", None),
        ("/home/ana/LaTeX/thesis.tex", "/home/ana/LaTeX", "thesis.tex"),  # ends in X
        ("/etc/passwd", "/", "etc/passwd"),
        ("/", "/", "."),
    ],
)
def test_a_path_relative_to_a_folder_is_as_pathlib_says(
    path: str, top: str, expected: str | None
) -> None:
    assert relative_posix(Path(path), Path(top)) == expected
    try:
        theirs: str | None = Path(path).relative_to(Path(top)).as_posix()
    except ValueError:
        theirs = None
    assert theirs == expected


def test_the_root_is_the_nearest_directory_with_teddy(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert find_root(root / "src") is None or find_root(root / "src") != root
    (root / ".teddy").mkdir()
    (root / "src" / "lib").mkdir()
    (root / "src" / ".teddy").write_text("not a directory\n")
    assert find_root(root / "src" / "lib") == root.resolve()
    assert find_root(root) == root.resolve()
    monkeypatch.chdir(root / "src")
    assert find_root() == root.resolve()
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert find_root() is None or find_root() not in (root, root.resolve())


# --- protected paths -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "why"),
    [
        ("", "a rule must be a non-empty path pattern such as '.git' or 'secrets/**'"),
        (" / ", "a rule must be a non-empty path pattern such as '.git' or 'secrets/**'"),
        (7, "a rule must be a non-empty path pattern such as '.git' or 'secrets/**'"),
        ("../secrets", "'../secrets' cannot be a rule: NUL bytes and '..' are not allowed"),
        ("a\\..\\b", "'a\\..\\b' cannot be a rule: NUL bytes and '..' are not allowed"),
        ("a\0b", "'a\0b' cannot be a rule: NUL bytes and '..' are not allowed"),
    ],
)
def test_unusable_rules_are_explained(rule: str, why: str) -> None:
    assert check_rule(rule) == why


@pytest.mark.parametrize("rule", [".git", "secrets/**", "/keys/*.pem", "*.key", "a..b", "X"])
def test_usable_rules_pass(rule: str) -> None:
    assert check_rule(rule) is None


MATCHES = [
    # (rule, path, protected)
    (".git", ".git", True),
    (".git", ".git/config", True),
    (".git", "vendor/lib/.git/hooks/pre-commit", True),
    (".git", "src/git.py", False),
    (".git", ".github/workflows/ci.yml", False),
    ("secrets/", "app/secrets/token", True),  # a trailing slash does not anchor
    ("/secrets/*.pem", "secrets/server.pem", True),
    ("/secrets/*.pem", "app/secrets/server.pem", False),  # anchored at the root
    ("/secrets/*.pem", "secrets/server.pem.txt", False),
    ("config/*.yaml", "config/prod.yaml", True),
    ("config/*.yaml", "config", False),  # the directory itself is not a yaml
    ("*.key", "deploy/id.key", True),
    ("key?.pem", "keys/key1.pem", True),
    ("key?.pem", "keys/key12.pem", False),
    ("[ab].txt", "b.txt", True),
    ("[ab].txt", "c.txt", False),
    ("docs/**/draft.md", "docs/draft.md", True),
    ("docs/**/draft.md", "docs/a/b/draft.md", True),
    ("docs/**/draft.md", "docs/a/b/final.md", False),
    ("docs/**/draft.md", "other/docs/draft.md", False),
    ("build/**", "build/out/app.bin", True),
    ("SECRETS/*.PEM", "secrets/a.pem", True),  # letter case does not matter
    (".git", ".GIT./config", True),  # nor trailing dots
    ("a/b", "a/b/c/d", True),  # a protected directory protects what it holds
    ("a/b", "a/bc", False),
    ("a/b", "a", False),
    ("cache", "cacheX/data", False),  # a longer name is another name
    ("secrets\\*.pem", "secrets/a.pem", True),  # written the Windows way
    ("secrets\\*.pem", "app/secrets/a.pem", False),
    ("/X", "X/notes.md", True),
    ("/X", "sub/X", False),
]


@pytest.mark.parametrize(("rule", "path", "protected"), MATCHES)
def test_a_rule_protects_what_it_names_and_what_is_under_it(
    rule: str, path: str, protected: bool
) -> None:
    assert protected_by(path, [rule]) == (rule if protected else None)


def test_the_first_protecting_rule_is_named() -> None:
    rules = ["*.md", ".teddy", ".teddy/config.yaml"]
    assert protected_by(".teddy/config.yaml", rules) == ".teddy"
    assert protected_by("README.md", rules) == "*.md"
    assert protected_by("src/app.py", rules) is None
    assert protected_by(".", rules) is None  # the root itself is no file to protect
    assert protected_by("x", []) is None


def test_the_files_rules_protect_are_known_by_inode(root: Path) -> None:
    (root / ".git" / "hooks").mkdir(parents=True)
    config = root / ".git" / "config"
    config.write_text("[core]\n")
    hook = root / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\n")
    (root / "secrets").mkdir()
    (root / "secrets" / "key.pem").write_text("k\n")
    (root / ".git" / "notes").symlink_to(root / "src" / "app.py")  # a link is not followed
    (root / "backup").mkdir()
    os.link(config, root / "backup" / "config")  # a hard link: the same inode

    def inode(path: Path) -> tuple[int, int]:
        st = path.stat()
        return (st.st_dev, st.st_ino)

    found = protected_links(root, [".git", "/secrets/*.pem"])
    assert found == {inode(config), inode(hook), inode(root / "secrets" / "key.pem")}
    assert inode(root / "backup" / "config") in found
    assert protected_links(root, []) == set()
    assert protected_links(root, ["hooks"]) == {inode(hook)}
    assert protected_links(root, ["/app.py"]) == set()
    assert protected_links(root, ["src"]) == {inode(root / "src" / "app.py")}


def test_every_protected_file_of_a_folder_is_found_among_others(root: Path) -> None:
    deploy = root / "deploy"
    deploy.mkdir()
    keys = []
    for n in range(6):  # in turn, so that some other file is listed before some key
        (deploy / f"notes{n}.txt").write_text("n\n")
        keys.append(deploy / f"key{n}.pem")
        keys[-1].write_text("k\n")
    found = protected_links(root, ["*.pem"])
    assert found == {(key.stat().st_dev, key.stat().st_ino) for key in keys}


def test_a_file_deleted_while_the_project_is_walked_is_skipped(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deploy = root / "deploy"
    deploy.mkdir()
    keys = []
    for n in range(6):
        (deploy / f"gone{n}.pem").write_text("k\n")
        keys.append(deploy / f"key{n}.pem")
        keys[-1].write_text("k\n")
    inodes = {(key.stat().st_dev, key.stat().st_ino) for key in keys}
    real = os.stat

    def deleted_meanwhile(path: str, *args: object, **kwargs: object) -> os.stat_result:
        if os.path.basename(path).startswith("gone"):
            raise FileNotFoundError(2, "No such file or directory", path)
        return real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "stat", deleted_meanwhile)
    assert protected_links(root, ["*.pem"]) == inodes


def test_a_rule_anchored_at_the_root_protects_a_file_there(root: Path) -> None:
    env = root / ".env"
    env.write_text("TOKEN=x\n")
    found = protected_links(root, ["/.env"])
    assert found == {(env.stat().st_dev, env.stat().st_ino)}


def test_a_project_at_the_file_system_root_holds_every_path() -> None:
    """With ``/`` as the project (a container's whole disk), paths under it are inside."""
    assert resolve(Path("/"), "tmp") == Path("/tmp").resolve()
    # Debian's merged /usr: /bin is a link to usr/bin, which stays inside /
    assert resolve(Path("/"), "bin/sh") == Path("/bin/sh").resolve()


def test_a_relative_root_is_resolved_from_the_current_directory_each_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An absolute root is resolved once; ``.`` means wherever the process is now."""
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        monkeypatch.chdir(tmp_path / name)
        assert resolve(Path("."), "a.txt") == (tmp_path / name).resolve() / "a.txt"
