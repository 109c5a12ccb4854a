"""Rendering results: terminal, JSON, Markdown and HTML."""
