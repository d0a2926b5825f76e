"""Hostile inputs, one module per area; ``tests/test_hostile.py`` runs every ``CASES`` entry."""
