"""The studies, one module each, named for its claim's key and its page: each exports CLAIM (registry.py)."""
