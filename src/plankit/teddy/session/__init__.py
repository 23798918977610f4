"""TeDDy sessions on disk: the .teddy/ layout, turns, config, memos and agent prompts."""
