"""Runnable examples of Depot (``python -m depot.examples.<name>``); each is also run by the tests."""
