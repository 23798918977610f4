"""``plankit board``: every plan in a project, live in the browser (ASGI app + static page)."""
