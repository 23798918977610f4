"""The context payload (input.md): context files, the project tree listing and URLs."""
