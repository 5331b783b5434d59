"""The replay TUI (Textual); model.py holds what it shows and imports no Textual."""
