"""The info string of a resource's fence: the language guessed from its file name."""

from __future__ import annotations

import posixpath

_BY_EXTENSION = {
    "py": "python", "pyi": "python", "pyw": "python", "pyx": "cython", "ipynb": "json",
    "js": "javascript", "mjs": "javascript", "cjs": "javascript", "jsx": "jsx",
    "ts": "typescript", "mts": "typescript", "cts": "typescript", "tsx": "tsx",
    "json": "json", "jsonc": "jsonc", "json5": "json5", "jsonl": "json", "ndjson": "json",
    "yaml": "yaml", "yml": "yaml", "toml": "toml", "ini": "ini", "cfg": "ini", "conf": "ini",
    "env": "dotenv", "properties": "properties", "xml": "xml", "xsd": "xml", "xsl": "xml",
    "svg": "xml", "plist": "xml", "html": "html", "htm": "html", "xhtml": "html",
    "vue": "vue", "svelte": "svelte", "css": "css", "scss": "scss", "sass": "sass",
    "less": "less", "md": "markdown", "markdown": "markdown", "mdx": "mdx", "rst": "rst",
    "adoc": "asciidoc", "tex": "latex", "txt": "text", "log": "text", "csv": "csv",
    "tsv": "tsv", "sql": "sql", "graphql": "graphql", "gql": "graphql", "proto": "protobuf",
    "sh": "bash", "bash": "bash", "zsh": "zsh", "fish": "fish", "ps1": "powershell",
    "bat": "batch", "cmd": "batch", "c": "c", "h": "c", "cc": "cpp", "cpp": "cpp",
    "cxx": "cpp", "hh": "cpp", "hpp": "cpp", "hxx": "cpp", "m": "objective-c",
    "mm": "objective-cpp", "cs": "csharp", "fs": "fsharp", "java": "java", "kt": "kotlin",
    "kts": "kotlin", "scala": "scala", "groovy": "groovy", "gradle": "groovy", "go": "go",
    "rs": "rust", "swift": "swift", "dart": "dart", "rb": "ruby", "php": "php", "pl": "perl",
    "pm": "perl", "lua": "lua", "r": "r", "jl": "julia", "ex": "elixir", "exs": "elixir",
    "erl": "erlang", "hs": "haskell", "ml": "ocaml", "mli": "ocaml", "clj": "clojure",
    "lisp": "lisp", "el": "elisp", "scm": "scheme", "zig": "zig", "nim": "nim", "v": "verilog",
    "sv": "systemverilog", "vhd": "vhdl", "asm": "asm", "s": "asm", "tf": "hcl", "hcl": "hcl",
    "nix": "nix", "dockerfile": "dockerfile", "mk": "makefile", "cmake": "cmake",
    "diff": "diff", "patch": "diff", "j2": "jinja", "jinja": "jinja", "tpl": "text",
}  # fmt: skip

_BY_NAME = {
    "dockerfile": "dockerfile", "containerfile": "dockerfile", "makefile": "makefile",
    "gnumakefile": "makefile", "cmakelists.txt": "cmake", "gemfile": "ruby",
    "rakefile": "ruby", "vagrantfile": "ruby", "justfile": "just", ".gitignore": "gitignore",
    ".teddyignore": "gitignore", ".dockerignore": "gitignore", ".gitattributes": "text",
    ".editorconfig": "ini", ".env": "dotenv", "pipfile": "toml", "requirements.txt": "text",
}  # fmt: skip


def language_for(path: str) -> str:
    """The fence info string for a root-relative path or URL (``text`` when unknown).

    ``src/app.py`` → ``python``, ``Dockerfile`` → ``dockerfile``, ``notes`` → ``text``.
    """
    name = posixpath.basename(path.split("?", 1)[0].split("#", 1)[0]).lower()
    known = _BY_NAME.get(name)
    if known is not None:
        return known
    _, dot, extension = name.rpartition(".")
    if dot and extension:
        return _BY_EXTENSION.get(extension, "text")
    return "text"
