"""``python -m plankit.mcp``: the same as ``plankit mcp``."""

from plankit.cli import main

if __name__ == "__main__":
    main(["mcp", *__import__("sys").argv[1:]])
