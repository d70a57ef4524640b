"""Analytic models of Hasegawa (2000), seed 004."""
