"""Analytic models of the congestion-control literature, one module per source."""
