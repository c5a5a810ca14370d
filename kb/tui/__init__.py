"""kb's terminal UI: the only package that imports Textual."""
