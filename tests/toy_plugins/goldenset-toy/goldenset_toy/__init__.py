"""Toy extensions of goldenset, one module per extension point."""
