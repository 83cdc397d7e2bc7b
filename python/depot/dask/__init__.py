"""Depot integrations for Dask."""
